"""Dream extraction: daily-note facts grouped into units and integrated into digest
nodes (CREATE / CORROBORATE / REFINE / CORRECT), by an LLM or by offline rules."""
