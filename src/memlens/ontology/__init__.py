"""Value ontology, step labelers (embedded, LLM), agreement statistics and refinement."""
