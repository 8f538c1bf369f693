"""What the index reads of a Markdown note.

chunker cuts a file into heading-aware chunks of whole lines within a token budget, reader
reads one file into what the index keeps (frontmatter, links, chunks), and parse turns a
batch of changed files into index material (store lines, terms), in parallel for a big batch.
"""
