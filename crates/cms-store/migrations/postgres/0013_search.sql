-- Full-text search (CONTRACT.md section 14). One row per searchable field of a document copy
-- (`draft` or `published`), locale (empty for a field that is not localized) and chunk of a long
-- value, holding the field's tokens as cms-core's tokenizer made them, with their positions, as a
-- tsvector (built from the tokens themselves, so no text search parser or dictionary of the
-- server changes them: SQLite and PostgreSQL match the same words). The rows are rewritten in
-- the unit of work of every write of the copy, and leave with their document.
CREATE TABLE document_search (
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    organization_id TEXT NOT NULL,
    copy TEXT NOT NULL,
    locale TEXT NOT NULL,
    path TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    -- How much a match in this field counts (thousandths; shorter fields count more).
    weight INTEGER NOT NULL,
    -- A digest of the whole value's tokens, for the exact-match boost.
    exact TEXT NOT NULL,
    tokens TSVECTOR NOT NULL,
    PRIMARY KEY (document_id, copy, locale, path, chunk)
);
CREATE INDEX document_search_tokens ON document_search USING GIN (tokens);
-- The row-level security policy's range.
CREATE INDEX document_search_by_organization ON document_search (organization_id);

-- Behind the same wall as documents (migration 0005): read own plus children, write own only.
SELECT cms_enable_tenant_wall('document_search');

-- Per document type, the signature of what its search rows were built from (searchable paths,
-- localized paths, tokenizer version): a start that finds another one rebuilds that type's rows.
-- No organization's data: not walled, like `instance_state`.
CREATE TABLE search_index_state (
    doc_type TEXT PRIMARY KEY,
    signature TEXT NOT NULL
);
