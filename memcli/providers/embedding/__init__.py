"""Embedding backends behind one small interface (`base.Embedder`), chosen by name in
`registry`. Importing this package loads neither httpx nor onnxruntime."""
