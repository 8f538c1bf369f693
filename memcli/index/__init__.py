"""The index: everything under mem_metadata/ that `mem reindex` can rebuild from the Markdown.

Five families, each a subpackage that never imports this top level:
    currency/  which dated statement a newer one supersedes (docs/currency.md): the rules
               reading the subject and value a statement sets (subjects, reading, kinds,
               gloss), a note's statements (statements), one pass relating them (relate), and
               the store every sync refreshes (update; a search reads it through the package)
    notes/     what the index reads of a Markdown file: chunker (heading-aware, line-exact
               chunks), reader (frontmatter, links, chunks of one file), parse (many files,
               in parallel for a big batch)
    keyword/   the keyword segment engine: tokenizer, immutable memory-mapped segments
               (snapshot) read as one view through the manifest (segments), a new segment's
               arrays (assemble), BM25 scoring (bm25)
    stores/    the ReMe-format stores (chunk store, graph, catalog): their line formats
               (store), zstd frames per segment (frames), rewritten as a mirror of the
               segments (mirror)
    vectors/   passage vectors: passages of a chunk, vector files per segment (vecseg) read as
               one matrix with the active space and request cache (vectors), filled from the
               cache (fill), carried over an update (carry), the space's noise floor (noise),
               the vault's word vectors (terms) and its words' definitions (glosses)
The family dependencies run one way: currency -> vectors -> notes -> stores -> keyword.

This top level orchestrates them: an update is detected (sync, with quick's cheap check,
journaled's view from `mem watch` and sources' changed conversation logs), parsed, committed as segments (commit, merge; build
for a full build by parallel workers) and checked (verify); freshness keeps a search's index
current; embed runs the embedding of every passage; sync refreshes currency after each update.
"""

# Bumped whenever chunk boundaries or texts change for the same input: forces a rebuild.
PARSER_VERSION = 3  # 3: a note's source conversation (memcli.index.notes.source)
