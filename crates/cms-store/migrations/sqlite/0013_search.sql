-- Full-text search (CONTRACT.md section 14). One row per searchable field of a document copy
-- (`draft` or `published`), locale (empty for a field that is not localized) and chunk of a long
-- value, holding the field's tokens as cms-core's tokenizer made them, space-separated. The rows
-- are rewritten in the unit of work of every write of the copy, and leave with their document.
CREATE TABLE document_search (
    id INTEGER PRIMARY KEY,
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
    tokens TEXT NOT NULL,
    UNIQUE (document_id, copy, locale, path, chunk)
);

-- The index over the tokens, its content read from `document_search` (nothing stored twice).
-- The `ascii` tokenizer splits only on ASCII punctuation and space, which the tokens never hold:
-- it takes each one whole, so SQLite matches exactly the words PostgreSQL does.
CREATE VIRTUAL TABLE document_search_fts USING fts5(
    tokens,
    content = 'document_search',
    content_rowid = 'id',
    tokenize = 'ascii'
);
-- Rows are only ever inserted and deleted (a copy's rows are replaced whole).
CREATE TRIGGER document_search_insert AFTER INSERT ON document_search BEGIN
    INSERT INTO document_search_fts (rowid, tokens) VALUES (new.id, new.tokens);
END;
CREATE TRIGGER document_search_delete AFTER DELETE ON document_search BEGIN
    INSERT INTO document_search_fts (document_search_fts, rowid, tokens)
        VALUES ('delete', old.id, old.tokens);
END;

-- Per document type, the signature of what its search rows were built from (searchable paths,
-- localized paths, tokenizer version): a start that finds another one rebuilds that type's rows.
CREATE TABLE search_index_state (
    doc_type TEXT PRIMARY KEY,
    signature TEXT NOT NULL
);
