"""The vector side of the index: passage vectors of every chunk in one vector space.

passages cuts a chunk into the small windows the vector branch scores; vecseg keeps their
vectors in one file per keyword segment, and vectors reads those files as one matrix and
holds the active space and the request cache; fill and carry write the files during an
embedding run and across an index update. noise is the space's noise floor (what nonsense
scores: a vector hit must score above it), the one place it is measured, kept and read.
terms (the vault's word vectors) and glosses (its words' definitions) feed query expansion.
The embedding run that drives them is memcli.index.embed.
"""
