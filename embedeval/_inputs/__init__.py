"""Stage 1, inputs: arrays checked and normalised once, before any work.

Takes what a user passes (embeddings, binary codes, labels, choices) and gives float32 rows in
a safe range (scaled by a power of two where needed, cosine rows normalised in float64), packed
codes, encoded labels, and the errors that name the argument, the rule and what arrived.
"""
