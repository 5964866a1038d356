"""The examples of ``embedeval --help``: one line or more per capability (every command,
``--explore``, trec_eval's drop-in), and each command's own lines under its ``--help``."""

from __future__ import annotations

EXAMPLES = """examples:
  embedeval evaluate emb.npy labels.txt --metrics precision@1 recall@10 map@r --ci 0.95
  embedeval evaluate q.npy q_labels.npy --reference g.npy --reference-labels g_labels.npy --format json
  embedeval evaluate emb.npz labels.txt --key val_embeddings --plot eval.png --report eval.html
  embedeval evaluate emb.npy labels.txt --ignore-same-query sequences.txt --metrics map@r precision@1
  embedeval evaluate emb.npy tags.txt --multi-label --metrics map precision@10
  embedeval evaluate emb.npy --oml df.csv --metrics cmc@1 precision@5 map@r --format json
  embedeval evaluate emb.npy labels.txt --groups languages.txt --names safe --format json
  embedeval evaluate emb.npy labels.txt --metrics precision@1 map@r nmi ami eer tar@far=1e-3 pcf@0.5
  embedeval evaluate codes.npy labels.txt --distance hamming --ties expected --metrics map precision_radius@2
  embedeval compare model_a.npy model_b.npy labels.txt --metrics precision@1 map@r
  embedeval compare qrels.txt bm25.txt dense.txt hybrid.txt --metrics map ndcg@10 --all-pairs
  embedeval compare qrels.txt base.txt --system tuned=s1.txt,s2.txt,s3.txt --format latex
  embedeval compare --beir scifact/ --system minilm=q_a.npy,c_a.npy --system e5=q_b.npy,c_b.npy --metrics ndcg@10
  embedeval retrieval q.npy corpus.npy qrels.txt --query-ids q.txt --corpus-ids docs.txt --metrics ndcg@10 map
  embedeval retrieval q.npy corpus.npy --beir scifact/ --split test --metrics ndcg@10 recall@100
  embedeval rankings qrels.txt run.txt --metrics ndcg@10 map recall@100
  embedeval scores scores.npy relevance.npy --metrics ndcg@10 recall@20
  embedeval evaluate emb.npy labels.txt --metrics precision@1 map@r --explore page.html --images thumbs.txt
  embedeval rankings qrels.txt run.txt --metrics map ndcg@10 --max-retrieved 100 --judged-only --explore page.html
  embedeval trec_eval -q -m all_trec qrels.txt run.txt
  embedeval leaderboard --scores beir_ndcg10.csv --plot cd.png --rope 0.01
  embedeval leaderboard --trec scifact sf/qrels.txt sf/bm25.txt sf/e5.txt --trec fiqa fq/qrels.txt fq/bm25.txt fq/e5.txt
  embedeval neighbors queries.npy --reference base.npy --k 100 --out gt.ivecs --out gt.fvecs
  embedeval reality-check --out-dir plots/ --n 2000 --seed 0
  embedeval metrics --form rankings
  embedeval metrics map ndcg --format json
"""


# Lines that only the command's own --help shows, after those of EXAMPLES
_ONLY_UNDER = {
    "leaderboard": [
        "  embedeval leaderboard --mteb results/ --post-hoc wilcoxon --format markdown",
        "  embedeval leaderboard --per-query-values values.csv --plot cd.svg",
    ],
}


def examples_of(command: str) -> str:
    """The lines of :data:`EXAMPLES` that run ``command``, and its own further lines, as an epilog."""
    lines = [line for line in EXAMPLES.splitlines() if line.startswith(f"  embedeval {command} ")]
    lines += _ONLY_UNDER.get(command, [])
    return "examples:\n" + "\n".join(lines) + "\n" if lines else ""
