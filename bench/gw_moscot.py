"""moscot's TranslationProblem (ott-jax) on the datasets of bench/gw.py's `align` part: the single-cell peer.

Runs in its own environment (jax is a peer's dependency, not ours): `bash tools/setup_moscot.sh`, then
    .venv-moscot/bin/python bench/gw_moscot.py --dataset snareseq --json bench/results/gw_moscot_snareseq.json
    .venv-moscot/bin/python bench/gw_moscot.py --dataset snareseq --cost geodesic --json bench/results/gw_moscot_snareseq_geodesic.json
Both sides as point clouds of L2-normalised rows (SCOT's preprocessing), squared-Euclidean intra-domain costs
(moscot's default cost), pure GW (alpha=1); the source is translated onto the target (moscot's barycentric
`translate`) and read out as in bench/gw.py: FOSCTTM with the pairing hidden, 5-NN label transfer on PBMC.
`--cost geodesic` (rows written to bench/results/gw_moscot_<dataset>_geodesic.json) runs moscot's graph cost instead:
per side, scanpy's kNN graph (`sc.pp.neighbors`, k=15 = scanpy's default, the k moscot's own tests use; UMAP
connectivities, Euclidean on the same L2-normalised rows), handed to the prepared problem with
`set_graph_x`/`set_graph_y(cost='geodesic')` as a dense float64 DataFrame (as in moscot's tests) with moscot's default
heat-kernel time t=None, i.e. t = eps/4 (ott's `Geodesic`: -4t log of the heat kernel). The graph build is timed.
"""
import argparse, json, os, sys, time
import numpy as np

def main():
    p = argparse.ArgumentParser()
    p.add_argument('--dataset', choices=['snareseq', 'scgem', 'pbmc'], default='snareseq')
    p.add_argument('--seeds', type=int, nargs='+', default=[0]); p.add_argument('--epsilons', type=float, nargs='+', default=[1e-2, 1e-3])
    p.add_argument('--cost', choices=['sq_euclidean', 'geodesic'], default='sq_euclidean')
    p.add_argument('--k', type=int, default=15, help='kNN graph size per side for --cost geodesic')
    p.add_argument('--json', default=None)
    a = p.parse_args()
    import anndata, pandas as pd, scanpy as sc
    from moscot.problems.cross_modality import TranslationProblem
    from relrep_nb.metrics import foscttm
    from relrep_nb.experiments.latent_gw import _load_pair, knn_labels, pbmc_unpaired
    rows = []; cost_name = 'sq. Euclidean' if a.cost == 'sq_euclidean' else f'geodesic kNN k={a.k}'
    for s in a.seeds:
        if a.dataset == 'pbmc':
            x, y, lx, ly = pbmc_unpaired(s); score = lambda zx, zy: float((knn_labels(zx, zy, lx) == ly).mean())
        else:
            x, y, _ = _load_pair(a.dataset, None, 0)
            perm = np.random.default_rng(10_000 + s).permutation(len(y)); inv = np.argsort(perm); y = y[perm]
            score = lambda zx, zy: float(foscttm(zx, zy[inv]))
        xn = x / np.linalg.norm(x, axis=1, keepdims=True); yn = y / np.linalg.norm(y, axis=1, keepdims=True)
        for eps in a.epsilons:
            A = anndata.AnnData(X=xn.astype(np.float32)); B = anndata.AnnData(X=yn.astype(np.float32))
            A.obs_names = [f'x{i}' for i in range(len(xn))]; B.obs_names = [f'y{i}' for i in range(len(yn))]
            A.obsm['feat'], B.obsm['feat'] = A.X, B.X
            t0, c0 = time.perf_counter(), time.process_time()
            tp = TranslationProblem(adata_src=A, adata_tgt=B).prepare(src_attr='feat', tgt_attr='feat')
            if a.cost == 'geodesic':
                for ad, setter in ((A, tp[('src', 'tgt')].set_graph_x), (B, tp[('src', 'tgt')].set_graph_y)):
                    sc.pp.neighbors(ad, n_neighbors=a.k, use_rep='feat')
                    setter(pd.DataFrame(ad.obsp['connectivities'].toarray().astype('float64'), index=ad.obs_names,
                                        columns=ad.obs_names), cost='geodesic', t=None)
            tp = tp.solve(alpha=1.0, epsilon=eps)
            zx = np.asarray(tp.translate(source='src', target='tgt', forward=True))
            rows.append(dict(method=f'moscot TranslationProblem (ott-jax, {cost_name}, eps={eps:g})', seed=s, score=score(zx, yn),
                             seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0))
            print(rows[-1], flush=True)
    res = dict(part='moscot', dataset=a.dataset, metric='label transfer (5-NN)' if a.dataset == 'pbmc' else 'FOSCTTM', rows=rows,
               loadavg_1min_end=os.getloadavg()[0])
    print(json.dumps(res, indent=1))
    if a.json:
        with open(a.json, 'w') as f: json.dump(res, f, indent=1)

if __name__ == '__main__': main()
