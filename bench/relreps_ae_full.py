"""Reconstruction stitching of the relreps chapter at the authors' configuration (`SIZES['full']['stitching']`), per dataset.

    python bench/relreps_ae_full.py                       # every dataset of IMAGE_DATASETS
    python bench/relreps_ae_full.py --datasets mnist5k    # only these; the table keeps the other datasets' recorded rows

Each trained model is kept in relrep_nb's cache (`cache_dir('relreps_ae')`, named by a hash of its configuration),
so an interrupted run resumes where it stopped and a rerun only stitches. The table goes to
bench/results/relreps_ae_full_stitching.csv and each dataset's training seconds (summed over its models, as measured
when each was trained) to bench/results/relreps_ae_full.json; the
chapter's slow cells render them. Cost at one thread: about 1 CPU-hour for mnist5k (3,600 training images), about
10 CPU-hours for Fashion-MNIST (54,000).
"""
import argparse, json, time
from pathlib import Path

def main(argv=None):
    from relrep_nb.experiments.relreps import SIZES, IMAGE_DATASETS, autoencoder_stitching
    from relrep_nb.encoders import cache_dir
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--datasets', nargs='*', default=list(IMAGE_DATASETS), choices=IMAGE_DATASETS)
    ap.add_argument('--out', default='bench/results')
    ap.add_argument('--threads', type=int, default=1, help='torch threads')
    a = ap.parse_args(argv)
    import pandas as pd
    out = Path(a.out); table, log = out / 'relreps_ae_full_stitching.csv', out / 'relreps_ae_full.json'
    rec = json.loads(log.read_text()) if log.exists() else {}
    for kw in SIZES['full']['stitching']:
        if kw['dataset'] not in a.datasets: continue
        t0, c0 = time.perf_counter(), time.process_time()
        df = autoencoder_stitching(**kw, threads=a.threads, cache=cache_dir('relreps_ae'), progress=True)
        old = pd.read_csv(table) if table.exists() else pd.DataFrame(columns=df.columns)
        pd.concat([old[old.dataset != kw['dataset']], df], ignore_index=True).to_csv(table, index=False)
        own = df[~df.stitched]      # one row per model: the seconds its training took when it was trained (cached or not)
        rec[kw['dataset']] = dict(models=len(own), training_seconds=round(float(own.enc_train_s.sum()), 1), threads=a.threads,
                                  this_run_seconds=round(time.perf_counter() - t0, 1), this_run_cpu_seconds=round(time.process_time() - c0, 1),
                                  mean_image_mse=df.attrs['mean_image_mse'])
        log.write_text(json.dumps(rec, indent=2))
        print(f"{kw['dataset']}: {rec[kw['dataset']]}", flush=True)

if __name__ == '__main__': main()
