"""`claims()` of the word and stitching chapters on small hand-made tables: every pre-registered value
(min/max over directions, ratio with a guarded zero, mean over every ordered pair) and its rule."""
import math
import numpy as np
import pandas as pd
import pytest
from relrep_nb.experiments import relreps_words as W, relreps_stitching as S

def _words(rel=(0.9, 0.6), ab=(0.001, 0.003), seeds=(0, 1, 2)):
    return pd.DataFrame([dict(pair='a↔b', method=m, seed=s, direction=d, n_words=19_700, n_queries=5000, n_anchors=300,
                              mrr10=v, jaccard=0.2)
                         for s in seeds for d, r, a in zip(('a→b', 'b→a'), rel, ab) for m, v in (('relative', r), ('absolute', a))])

def _xl(rel=(0.2, 0.3), ab=(0.01, 0.02), n_anchors=300):
    return pd.DataFrame([dict(method=m, n_anchors=n_anchors, seed=s, direction=d, n_queries=1000, n_candidates=1000, mrr10=v)
                         for s in (0, 1, 2) for d, r, a in zip(('eng→fra', 'fra→eng'), rel, ab) for m, v in (('relative', r), ('absolute', a))])

def _by_name(cs): return {c.name: c for c in cs}

def test_word_claims_take_the_worse_direction():
    c = _by_name(W.claims(dict(word_alignment=_words(), cross_lingual=_xl())))
    assert list(c) == ['word_rel_vs_abs', 'word_abs_incoherent', 'cross_lingual_words_ours']
    assert c['word_rel_vs_abs'].value == pytest.approx(0.6) and c['word_rel_vs_abs'].holds
    assert c['word_abs_incoherent'].value == pytest.approx(0.003) and c['word_abs_incoherent'].holds
    assert c['cross_lingual_words_ours'].value == pytest.approx(15.0) and c['cross_lingual_words_ours'].holds
    assert '20000 shared words' in c['word_rel_vs_abs'].what and '3 seeds' in c['word_rel_vs_abs'].what

@pytest.mark.parametrize('rel, ab, holds', [((0.9, 0.49), (0.0, 0.0), (False, True)), ((0.5, 0.7), (0.05, 0.051), (True, False))])
def test_word_claim_rules(rel, ab, holds):
    c = W.claims(dict(word_alignment=_words(rel, ab), cross_lingual=_xl()))
    assert (c[0].holds, c[1].holds) == holds

def test_cross_lingual_ratio_guards_zero():
    c = W.claims(dict(word_alignment=_words(), cross_lingual=_xl(ab=(0.0, 0.05))))[2]
    assert c.value == pytest.approx(0.3 / 0.05) and c.holds and 'infinite' in c.what      # eng→fra is inf, fra→eng 6
    c = W.claims(dict(word_alignment=_words(), cross_lingual=_xl(ab=(0.0, 0.0))))[2]
    assert math.isinf(c.value) and c.holds
    c = W.claims(dict(word_alignment=_words(), cross_lingual=_xl(rel=(0.0, 0.0), ab=(0.0, 0.0))))[2]
    assert math.isnan(c.value) and not c.holds
    c = W.claims(dict(word_alignment=_words(), cross_lingual=_xl(rel=(0.04, 0.3), ab=(0.01, 0.01))))[2]
    assert c.value == pytest.approx(4.0) and not c.holds

def test_word_claims_errors():
    with pytest.raises(ValueError, match='no rows with 300 anchors'):
        W.claims(dict(word_alignment=_words(), cross_lingual=_xl(n_anchors=1000)))
    with pytest.raises(ValueError, match="no rows of method 'absolute'"):
        W.claims(dict(word_alignment=_words().query("method == 'relative'"), cross_lingual=_xl()))

def _stitch(encoders, off, diag=0.7, seeds=(0, 1, 2), **kw):
    "A table of `stitching_matrix`: `off(mode, a, b)` gives the stitched score of each ordered pair."
    return pd.DataFrame([dict(mode=mode, seed=s, train_on=a, test_on=b, f1=diag if a == b else off(mode, a, b), acc=0.,
                              n_anchors=300 if mode == 'relative' else 0, width_matched=False, **kw)
                         for mode in ('absolute', 'relative') for s in seeds for a in encoders for b in encoders])

def test_stitching_claims_average_every_ordered_pair():
    text = _stitch('abcd', lambda m, a, b: (0.6 if a == 'a' else 0.3) if m == 'relative' else 0.05).assign(
        n_train=100, n_test=50, n_classes=4)
    enc = S.IMAGE_ENCODERS + ('cnn-w1',)
    image = pd.concat([_stitch(enc, lambda m, a, b: 0.25 if m == 'relative' else 0.1).query("mode == 'absolute'").assign(anchors='none'),
                       _stitch(enc, lambda m, a, b: 0.9 if 'cnn' in a + b else 0.25).query("mode == 'relative'").assign(anchors='in-domain'),
                       _stitch(enc, lambda m, a, b: 0.0).query("mode == 'relative'").assign(anchors='out-of-domain')]
                      ).assign(n_train=100, n_test=50)
    t, i = S.claims(dict(text=text, image=image))
    assert t.value == pytest.approx((3 * 0.55 + 9 * 0.25) / 12) and t.holds                 # 12 ordered pairs
    assert i.value == pytest.approx(0.15) and not i.holds                                    # the 3 pretrained encoders only
    assert 'all 4 encoders' in i.what and '6 ordered pairs' in i.what

def test_stitching_claim_needs_enough_encoders():
    text = _stitch('abc', lambda m, a, b: 0.5 if m == 'relative' else 0.).assign(n_train=100, n_test=50, n_classes=4)
    image = pd.concat([_stitch(S.IMAGE_ENCODERS, lambda m, a, b: 0.).query("mode == 'absolute'").assign(anchors='none'),
                       _stitch(S.IMAGE_ENCODERS, lambda m, a, b: 0.5).query("mode == 'relative'").assign(anchors='in-domain')])
    t, i = S.claims(dict(text=text.assign(n_train=100), image=image.assign(n_train=100, n_test=50)))
    assert t.value is None and not t.holds and 'fewer than 4' in t.what
    assert i.value == pytest.approx(0.5) and i.holds

def test_pair_gaps_errors():
    df = _stitch('ab', lambda m, a, b: 0.5)
    with pytest.raises(ValueError, match="are not in the table"): S.pair_gaps(df, ['a', 'z'])
    with pytest.raises(ValueError, match='at least 2'): S.pair_gaps(df, ['a'])
    with pytest.raises(ValueError, match='no rows with'): S.pair_gaps(df.query("mode == 'relative'"))
    with pytest.raises(ValueError, match='same seeds'):
        S.pair_gaps(pd.concat([df.query("mode == 'relative'"), df.query("mode == 'absolute' and seed < 2")]))
