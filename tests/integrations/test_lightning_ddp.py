"""The Lightning callback under DDP: two CPU processes (gloo), each validating half of the data
(Lightning's DistributedSampler pads the odd half with a repeated sample). Every rank must log
the values of one embedeval.evaluate over all the validation embeddings, each sample once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import embedeval

torch = pytest.importorskip("torch")
pytest.importorskip("lightning.pytorch")

METRICS = ["precision@1", "recall@2", "map@r", "map"]
N = 101  # odd: the sampler pads one rank with a repeated sample

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import torch, lightning
    from embedeval.integrations.lightning import RetrievalMetrics

    out = sys.argv[1]
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 6, (%(n)d,), generator=g)
    x = torch.randn(6, 8, generator=g)[labels] + 0.9 * torch.randn(%(n)d, 8, generator=g)
    data = torch.utils.data.TensorDataset(x, labels, torch.arange(%(n)d))

    class Model(lightning.LightningModule):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.net = torch.nn.Linear(8, 4)

        def forward(self, x):
            return self.net(x)

        def training_step(self, batch, batch_idx):
            return self(batch[0]).pow(2).mean()

        def validation_step(self, batch, batch_idx):
            x, y, idx = batch
            return {"embeddings": self(x), "labels": y, "indices": idx, "groups": idx %% 2}

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    callback = RetrievalMetrics(metrics=%(metrics)r)
    model = Model()
    trainer = lightning.Trainer(
        max_epochs=2, callbacks=[callback], logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False,
        accelerator="cpu", devices=2, strategy="ddp", num_nodes=1,
    )
    loader = lambda: torch.utils.data.DataLoader(data, batch_size=16)
    trainer.fit(model, loader(), loader())
    logged = {k: float(v) for k, v in trainer.callback_metrics.items() if k.startswith("val/")}
    weights = {k: v.tolist() for k, v in model.state_dict().items()}
    with open(f"{out}/rank{trainer.global_rank}.json", "w") as f:
        json.dump({"logged": logged, "weights": weights, "n": callback.result.n_evaluated}, f)
    """
)


def test_every_ddp_rank_logs_the_values_of_one_evaluation(tmp_path):
    script = tmp_path / "fit.py"
    script.write_text(SCRIPT % {"n": N, "metrics": METRICS})
    env = {**os.environ, "PYTHONPATH": str(Path(embedeval.__file__).parents[1]), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]

    # the data and the final model, rebuilt here: one evaluation of every validation embedding
    g = torch.Generator().manual_seed(0)
    labels = torch.randint(0, 6, (N,), generator=g)
    x = torch.randn(6, 8, generator=g)[labels] + 0.9 * torch.randn(N, 8, generator=g)
    net = torch.nn.Linear(8, 4)
    net.load_state_dict({k.removeprefix("net."): torch.tensor(v) for k, v in ranks[0]["weights"].items()})
    with torch.no_grad():
        embeddings = net(x).numpy()
    groups = np.arange(N) % 2
    want = embedeval.evaluate(embeddings, labels.numpy(), metrics=METRICS, groups=groups).to_dict("val/", names="safe")

    assert ranks[0]["weights"] == ranks[1]["weights"]  # DDP keeps the replicas equal
    for r, rank in enumerate(ranks):
        assert rank["n"] == N  # the padded repeat counted once
        assert rank["logged"].keys() == want.keys(), r
        for key, value in want.items():
            assert rank["logged"][key] == pytest.approx(value, rel=1e-6), (r, key)
