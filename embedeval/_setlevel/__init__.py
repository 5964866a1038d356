"""Set-level metrics: one number for the whole embedding set rather than a mean over queries.

Clustering (NMI, AMI), verification (FNMR@FMR, TAR@FAR, EER, pair AUROC, over every pair,
exactly) and geometry (the covariance spectrum). Takes prepared embeddings and labels; gives
values and their definitions.
"""
