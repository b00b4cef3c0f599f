-- Which door a change set's writes came through (CONTRACT.md section 21): the assistant's chat
-- turn, or one request of the MCP server. Rows written before were all the assistant's.
ALTER TABLE agent_change_sets ADD COLUMN source TEXT NOT NULL DEFAULT 'assistant'
    CHECK (source IN ('assistant', 'mcp'));
