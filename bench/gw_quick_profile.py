"""Where the latent-GW chapter's quick run spends its time: the image encodings it needs from an empty cache, then each
part of `run('quick')` with those encodings cached (so the two add up to a cold run), on one thread.

    python bench/gw_quick_profile.py bench/results/gw_quick_profile.json      # about 12 CPU-minutes

It uses a cache directory of its own (under .cache/, removed at the end) so that the encodings are measured cold.
"""
import json, os, shutil, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / '.cache' / 'gw_quick_profile'

def main(out:str):
    shutil.rmtree(CACHE, ignore_errors=True)
    os.environ['RELREP_NB_CACHE'] = str(CACHE)          # before the package reads it
    import torch
    torch.set_num_threads(1)
    from relrep_nb.experiments import latent_gw as L
    z = L.SIZES['quick']
    n_ind = z['inductive'][0]['n_images']
    n_ni = z['nonisometric']['n']
    # the (encoder, images, zoom) the quick parts ask `fmnist_embeddings` for, in the order `run` asks
    n_sp = z['spectral'].get('n_images', 1000)
    needs = [('efficientnet-lite0', n_sp, 1.0), ('efficientnet-lite1', n_sp, 1.0),     # spectral
             ('efficientnet-lite0', n_ind, 1.0),                                        # inductive
             ('efficientnet-lite0', n_ni, 1.0), ('efficientnet-lite0', n_ni, 0.75), ('efficientnet-lite1', n_ni, 1.0)]  # non-isometric views
    enc, parts = [], {}
    for name, n, zoom in needs:
        c0 = time.process_time()
        L.fmnist_embeddings(n, encoder=name, zoom=zoom)
        enc.append(dict(encoder=name, images=n, zoom=zoom, cpu_seconds=time.process_time() - c0))
        print(enc[-1], flush=True)
    for p in L.PARTS:
        t0, c0 = time.perf_counter(), time.process_time()
        L.run('quick', parts=[p])
        parts[p] = dict(seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0)
        print(p, parts[p], flush=True)
    enc_s, fit_s = sum(e['cpu_seconds'] for e in enc), sum(v['seconds'] for v in parts.values())
    res = dict(meta=dict(threads=1, torch=torch.__version__, cpu=os.cpu_count(), note='parts timed with their encodings cached; '
                         'pot_memory runs POT in subprocesses (its seconds are wall time)'),
               encodings=enc, parts=parts, encoding_cpu_seconds=enc_s, parts_seconds=fit_s, cold_total_seconds=enc_s + fit_s)
    Path(out).write_text(json.dumps(res, indent=1))
    print(f'encodings {enc_s:.0f} CPU-s + parts {fit_s:.0f} s = {enc_s + fit_s:.0f} s')
    shutil.rmtree(CACHE, ignore_errors=True)

if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'gw_quick_profile.json')
