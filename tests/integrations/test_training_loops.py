"""The training-loop adapters in real training loops (CPU, tiny models, nothing downloaded): the
values they log equal one embedeval.evaluate over every validation embedding."""

from __future__ import annotations

import numpy as np
import pytest

import embedeval

torch = pytest.importorskip("torch")

METRICS = ["precision@1", "recall@2", "map@r", "map"]


def _data(n=96, d=8, classes=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, classes, (n,), generator=g)
    centres = torch.randn(classes, d, generator=g)
    x = centres[labels] + 0.9 * torch.randn(n, d, generator=g)
    return x, labels


def _expected(model, x, labels, groups=None):
    with torch.no_grad():
        embeddings = model(x).numpy()
    return embeddings, embeddings_summary(embeddings, labels.numpy(), groups)


def embeddings_summary(embeddings, labels, groups=None):
    return embedeval.evaluate(embeddings, labels, metrics=METRICS, groups=groups).to_dict("val/", names="safe")


def test_lightning_callback_logs_what_evaluate_gives():
    lightning = pytest.importorskip("lightning.pytorch")
    from embedeval.integrations.lightning import RetrievalMetrics

    class Model(lightning.LightningModule):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.net = torch.nn.Linear(8, 4)

        def forward(self, x):
            return self.net(x)

        def training_step(self, batch, batch_idx):
            x, _, _ = batch
            return self(x).pow(2).mean()

        def validation_step(self, batch, batch_idx):
            x, y, idx = batch
            return {"embeddings": self(x), "labels": y, "indices": idx, "groups": idx % 2}  # two groups

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.01)

    x, labels = _data()
    ds = torch.utils.data.TensorDataset(x, labels, torch.arange(len(labels)))
    loader = torch.utils.data.DataLoader(ds, batch_size=16)  # 6 validation batches
    callback = RetrievalMetrics(metrics=METRICS)
    model = Model()
    trainer = lightning.Trainer(
        max_epochs=2,
        callbacks=[callback],
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        accelerator="cpu",
        devices=1,
    )
    trainer.fit(model, loader, loader)
    _, want = _expected(model, x, labels, groups=np.arange(len(labels)) % 2)
    assert "val/group/1/map_at_r" in want
    logged = {k: float(v) for k, v in trainer.callback_metrics.items() if k.startswith("val/")}
    assert logged.keys() == want.keys()
    for key, value in want.items():
        assert logged[key] == pytest.approx(value, rel=1e-6), key
    assert callback.result.n_evaluated == len(labels)


def test_lightning_callback_names_what_validation_step_must_return():
    pytest.importorskip("lightning.pytorch")
    from embedeval.integrations.lightning import RetrievalMetrics

    with pytest.raises(ValueError, match=r"'embeddings' and 'labels'; got dict with keys \['x'\]"):
        RetrievalMetrics().on_validation_batch_end(None, None, {"x": 1}, None, 0)


class _Embedder(torch.nn.Module):
    """A one-layer BERT built from a config (no download), mean-pooled into an embedding."""

    def __init__(self):
        super().__init__()
        transformers = pytest.importorskip("transformers")
        torch.manual_seed(0)
        config = transformers.BertConfig(
            vocab_size=40, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32
        )
        self.bert = transformers.BertModel(config)

    def forward(self, input_ids, labels=None):
        hidden = self.bert(input_ids=input_ids).last_hidden_state.mean(dim=1)
        return {"loss": hidden.pow(2).mean(), "logits": hidden}


class _Texts(torch.utils.data.Dataset):
    def __init__(self, n=40, classes=5):
        g = torch.Generator().manual_seed(1)
        self.labels = torch.randint(0, classes, (n,), generator=g)
        base = torch.randint(0, 40, (classes, 6), generator=g)
        noise = torch.randint(0, 40, (n, 6), generator=g)
        keep = torch.rand(n, 6, generator=g) < 0.7
        self.ids = torch.where(keep, base[self.labels], noise)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.labels[i]}


@pytest.mark.parametrize("batch_eval_metrics", [False, True])
def test_trainer_compute_metrics_gives_what_evaluate_gives(tmp_path, batch_eval_metrics):
    transformers = pytest.importorskip("transformers")
    from embedeval.integrations.transformers import compute_metrics

    model, data = _Embedder(), _Texts()
    args = transformers.TrainingArguments(
        output_dir=str(tmp_path),
        per_device_eval_batch_size=8,  # 5 batches
        batch_eval_metrics=batch_eval_metrics,
        report_to=[],
        use_cpu=True,
    )
    f = compute_metrics(METRICS)
    trainer = transformers.Trainer(model=model, args=args, eval_dataset=data, compute_metrics=f)
    got = trainer.evaluate()
    with torch.no_grad():
        embeddings = model(data.ids)["logits"].numpy()
    want = embedeval.evaluate(embeddings, data.labels.numpy(), metrics=METRICS).to_dict("eval_", names="safe")
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=1e-5, abs=1e-7), key
    assert f.last_result.n_evaluated == len(data)


def test_a_missing_framework_names_the_install_command(monkeypatch):
    from embedeval.integrations import require

    with pytest.raises(ImportError, match=r"needs no_such_framework: pip install 'embedeval\[integrations\]'"):
        require("no_such_framework", "this adapter")


def test_adapters_accept_numpy_predictions():
    from types import SimpleNamespace

    pytest.importorskip("transformers")
    from embedeval.integrations.transformers import compute_metrics

    x, labels = _data(seed=3)
    f = compute_metrics(METRICS)
    got = f(SimpleNamespace(predictions=(x.numpy(), None), label_ids=labels.numpy()))
    assert got == embedeval.evaluate(x.numpy(), labels.numpy(), metrics=METRICS).to_dict(names="safe")
    assert np.isfinite(list(got.values())).all()
