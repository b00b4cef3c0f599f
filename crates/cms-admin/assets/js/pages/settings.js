export async function mount() { throw new Error("This page is not built yet."); }
