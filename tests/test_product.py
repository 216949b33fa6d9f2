"""The product-of-invariances estimator under the package's estimator protocol (DESIGN.md)."""
import inspect
import numpy as np
import pytest
import torch
from relrep_nb.core import save_state
from relrep_nb.product import ProductProjector, ProductDecoder, SPACES, fit_decoder, accuracy

@pytest.fixture
def data():
    g = torch.Generator().manual_seed(0)
    return torch.randn(40, 8, generator=g), torch.randn(7, 8, generator=g), torch.randn(30, 8, generator=g)

@pytest.mark.parametrize('kw', [dict(), dict(pre='center', post='standardize'), dict(similarities=['l1', 'cosine'], pre='l2')])
def test_save_load_identical_outputs(tmp_path, data, kw):
    x, anchors, ref = data
    pp = ProductProjector(**kw).fit(anchors, reference=ref)
    pp.save(tmp_path / 'pp.pt')
    back = ProductProjector.load(tmp_path / 'pp.pt')
    assert back.get_params() == pp.get_params()
    assert torch.equal(back.transform(x), pp.transform(x))
    assert np.array_equal(back.transform(x.numpy()), pp.transform(x.numpy()))

def test_fit_returns_self(data):
    x, anchors, _ = data
    pp = ProductProjector()
    assert pp.fit(anchors) is pp

def test_get_params_lists_exactly_init_parameters():
    params = [p for p in inspect.signature(ProductProjector.__init__).parameters if p != 'self']
    pp = ProductProjector(['cosine', 'linf'], post='layernorm', memory_budget=1 << 20)
    assert sorted(pp.get_params()) == sorted(params)
    assert pp.get_params() == dict(similarities=['cosine', 'linf'], pre=None, post='layernorm', memory_budget=1 << 20,
                                   n_anchors=None, anchor_method='uniform', seed=0)
    assert ProductProjector(**pp.get_params()).names == pp.names

def test_init_stores_parameters_only():
    pp = ProductProjector()
    assert set(vars(pp)) == {'similarities', 'pre', 'post', 'memory_budget', 'n_anchors', 'anchor_method', 'seed'}
    assert not any(k.endswith('_') for k in vars(pp))

def test_unfitted_and_foreign_files(tmp_path, data):
    x, anchors, _ = data
    with pytest.raises(ValueError, match='not fitted'): ProductProjector().transform(x)
    with pytest.raises(ValueError, match='not fitted'): ProductProjector().save(tmp_path / 'x.pt')
    torch.save(dict(config=dict(similarities=list(SPACES)), tensors={}), tmp_path / 'foreign.pt')
    with pytest.raises(ValueError, match='not a relrep_nb file'): ProductProjector.load(tmp_path / 'foreign.pt')
    save_state(dict(config=dict(similarities=list(SPACES)), tensors={}), tmp_path / 'nospaces.pt', 'ProductProjector')
    with pytest.raises(ValueError, match='not a ProductProjector file'): ProductProjector.load(tmp_path / 'nospaces.pt')
    ProductProjector(['cosine']).fit(anchors).save(tmp_path / 'one.pt')
    with pytest.raises(ValueError, match='holds a ProductProjector, not a RelativeProjector'):
        __import__('relrep_nb.core').core.RelativeProjector.load(tmp_path / 'one.pt')

def test_loaded_projector_feeds_a_trained_decoder(tmp_path, data):
    x, anchors, _ = data
    pp = ProductProjector(post='standardize').fit(anchors, reference=x)
    r, y = pp.transform(x), (x[:, 0] > 0).long()
    dec = fit_decoder(ProductDecoder(4, 7, 2, width=8, seed=0), r, y, epochs=2)
    pp.save(tmp_path / 'pp.pt')
    assert accuracy(dec, ProductProjector.load(tmp_path / 'pp.pt').transform(x), y) == accuracy(dec, r, y)

# --- the chapter's claims on hand-made tables (relrep_nb.experiments.invariances.claims) ---
import pandas as pd
from relrep_nb.experiments import invariances as inv

def _tables(vision_product=.7, concat_vision=.8, linf_mse=.07, qkv=.7, text_product=.62, sa_authors=.5):
    """Three modalities; cosine wins text, Euclidean wins vision; known answers for every claim. The stitching rows are
    the same for the authors' MLP+Sum and ours; the aggregation table has the authors' two and our four."""
    rows, agg = [], []
    levels = {'text': dict(cosine=.6, euclidean=.5, l1=.5, linf=.3, product=text_product),
              'vision: toy': dict(cosine=.6, euclidean=.8, l1=.6, linf=.6, product=vision_product),
              'graph': dict(cosine=.8, euclidean=.7, l1=.7, linf=.7, product=.9)}
    for mod, lv in levels.items():
        for src, tgt in (('a', 'b'), ('b', 'a'), ('a', 'a')):
            for p, v in lv.items():
                for seed, eps in enumerate((-.01, 0, .01)):
                    rows += [dict(modality=mod, source=src, target=tgt, stitched=src != tgt, projection=p, aggregation=a,
                                  seed=seed, accuracy=v + eps + (.05 if src == tgt and p == 'product' else 0))
                             for a in ('mlp_sum_authors', 'mlp_sum')]
            for a, v in dict(mlp_sum=.7, concat=concat_vision if mod.startswith('vision') else .6, self_attention=.5,
                             mlp_sum_authors=.7, self_attention_authors=sa_authors, mlp_self_attention=.6).items():
                agg += [dict(modality=mod, source=src, target=tgt, stitched=src != tgt, projection='product', aggregation=a,
                             seed=seed, accuracy=v + eps) for seed, eps in enumerate((-.01, 0, .01))]
    rec = pd.DataFrame([dict(source=0, target=1, stitched=True, projection=p, mse=v) for p, v in
                        dict(cosine=.06, euclidean=.05, l1=.05, linf=.09, product=.05, absolute=.2, **{'product w/o linf': linf_mse}).items()])
    q = pd.DataFrame(dict(method=['zero-shot', 'QKV only', 'MLP head only'], accuracy=[.3, qkv, .6], modality='text', source='a', target='b'))
    return dict(stitching=pd.DataFrame(rows), aggregation=pd.DataFrame(agg), reconstruction=rec, qkv=q)

def test_claims_names_values_and_rules():
    cs = {c.name: c for c in inv.claims(_tables())}
    assert list(cs) == ['no_universal_metric', 'product_vs_best_single', 'product_vs_best_single_all_ours',
                        'mlp_sum_best_aggregation', 'mlp_sum_best_aggregation_all_ours', 'linf_complementary',
                        'qkv_space_selection', 'graph_product_gain', 'graph_stitching_index']   # CLAIMS.md's order
    want = dict(no_universal_metric=(2, '>= 2', True), product_vs_best_single=(0, '>= 0.75', False),
                product_vs_best_single_all_ours=(4 / 6, '>= 0.75', False),
                mlp_sum_best_aggregation=(1, '>= 0.67', True), mlp_sum_best_aggregation_all_ours=(2 / 3, '>= 0.67', False),
                linf_complementary=(1.4, '>= 1.2', True),
                qkv_space_selection=(.1, '>= 0.05', True), graph_product_gain=(.1, '>= 0.05', True),
                graph_stitching_index=(.9 / .95, '>= 0.9', True))
    for k, (v, rule, holds) in want.items():
        assert cs[k].value == pytest.approx(v) and cs[k].rule == rule and cs[k].holds == holds, (k, cs[k])

def test_claims_follow_the_tables():
    cs = {c.name: c for c in inv.claims(_tables(vision_product=.8, concat_vision=.6, linf_mse=.055, qkv=.62))}
    for k in ('product_vs_best_single', 'product_vs_best_single_all_ours'):     # within 1 se everywhere
        assert cs[k].value == 1 and cs[k].holds, cs[k]
    for k in ('mlp_sum_best_aggregation', 'mlp_sum_best_aggregation_all_ours'):
        assert cs[k].value == 1 and cs[k].holds, cs[k]
    assert cs['linf_complementary'].value == pytest.approx(1.1) and not cs['linf_complementary'].holds
    assert cs['qkv_space_selection'].value == pytest.approx(.02) and not cs['qkv_space_selection'].holds

def test_product_within_one_pooled_se_counts():
    t = _tables(vision_product=.8 - .005)   # below the best by less than the pooled se (0.01/√3·√2 ≈ 0.0082)
    assert {c.name: c for c in inv.claims(t)}['product_vs_best_single'].value == 1
    t = {c.name: c.value for c in inv.claims(_tables(vision_product=.8 - .02))}    # more than 1 pooled se below
    assert t['product_vs_best_single'] == 0 and t['product_vs_best_single_all_ours'] == pytest.approx(4 / 6)

def test_claim_scopes():
    "The paper-scoped claims read the vision cells / the attention aggregations; the `_all_ours` ones are wider."
    c = {c.name: c.value for c in inv.claims(_tables(vision_product=.8, text_product=.3))}   # text fails, vision holds
    assert c['product_vs_best_single'] == 1 and c['product_vs_best_single_all_ours'] == pytest.approx(4 / 6)
    c = {c.name: c.value for c in inv.claims(_tables(concat_vision=.99))}   # Concat wins vision: only `_all_ours` sees it
    assert c['mlp_sum_best_aggregation'] == 1 and c['mlp_sum_best_aggregation_all_ours'] == pytest.approx(2 / 3)
    c = {c.name: c.value for c in inv.claims(_tables(concat_vision=.6, sa_authors=.9))}   # the authors' SelfAttention wins
    assert c['mlp_sum_best_aggregation'] == 0 and c['mlp_sum_best_aggregation_all_ours'] == 1

def test_split_anchors_and_validation_rows():
    g = torch.Generator().manual_seed(0)
    e, y = {'a': torch.randn(100, 5, generator=g).numpy()}, np.arange(100) % 3
    d = inv.split_and_project(e, y, n_anchors=20)
    assert set(d['anchors'].tolist()) <= set(d['train'].tolist())
    v = inv.validation_rows(d, 0.25)
    assert len(v['test']) == 18 and set(v['test'].tolist()) | set(v['train'].tolist()) == set(d['train'].tolist())
    assert torch.equal(v['R']['a'], d['R']['a'])    # same anchors, same spaces: only the rows change
    with pytest.raises(ValueError, match='n_anchors'): inv.split_and_project(e, y, n_anchors=71)

def test_vision_claim_cells_are_pretrained(monkeypatch):
    "Vision claim cells pair pretrained image encoders; the CNNs trained here form the extra row, which no claim reads."
    from relrep_nb.encoders import list_encoders
    for z in inv.SIZES.values(): assert len(z['lite']) >= 2   # at least two pretrained vision encoders: stitching cells exist
    m, a, b = inv.SWEEP_PAIR
    assert m == 'vision: fashion-mnist' and a != b and {a, b} <= set(list_encoders())
    fake = lambda names, n=10: ({k: np.full((n, 3), i, np.float32) for i, k in enumerate(names)}, np.arange(n) % 2)
    monkeypatch.setattr(inv, 'vision_embeddings', lambda n, variants, cnn_seeds, cnn_train:
                        fake([f'efficientnet-lite{v}' for v in variants] + [f'cnn seed {s}' for s in cnn_seeds]))
    conventions = []   # the text encoders' `normalize` of each call: the claim cells' first, then the extra row's
    monkeypatch.setattr(inv, 'text_embeddings', lambda n, encoders, normalize: conventions.append(normalize) or fake(encoders))
    monkeypatch.setattr(inv, 'gcn_embeddings', lambda seeds: fake([f'gcn seed {s}' for s in seeds]))
    embs, cnn, text_mix = inv._embeddings(inv.SIZES['quick'])
    assert list(embs['vision: fashion-mnist'][0]) == ['efficientnet-lite0', 'efficientnet-lite1'] and list(cnn) == ['cnn seed 0']
    assert conventions == [False, None] and list(text_mix[0]) == list(embs['text'][0])   # one convention; the packaged mix apart
    t = _tables()
    extra = t | dict(cnn_stitching=t['stitching'].assign(modality=inv.CNN_ROW, accuracy=0.),
                     text_mix_stitching=t['stitching'].assign(modality=inv.TEXT_MIX_ROW, accuracy=0.))
    assert [c.to_dict() for c in inv.claims(extra)] == [c.to_dict() for c in inv.claims(t)]
