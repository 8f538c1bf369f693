"""How a search decides what to show and in what order, over an index it only reads.

rank is the entry point for order: given the keyword branch (memcli.index.keyword.bm25) and
the vector branch (vector: cosine over passage vectors, a chunk scoring as its best passage),
it applies the relevance floor, fuses the branches (fusion), folds neighbouring hits of one
file and places a current statement above the ones it superseded (currency). framing takes
the question's frame off a query, expand adds the vault's nearby and defined words to it and
narrower the words WordNet files under a query word,
links adds a hit's wikilink neighbours, and hits is the result type. The search job
(memcli.jobs.search) runs the branches and calls rank; it decides no order itself.
"""
