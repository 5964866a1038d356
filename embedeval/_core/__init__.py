"""Small shared pieces that every stage may use and that use no stage: memory budgets, the
compressed-rows (CSR) helpers, and the plain-text table renderers."""
