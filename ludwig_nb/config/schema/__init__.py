"""Ludwig 0.11's config schema as data: one module per section, built from ``fields`` specs."""
