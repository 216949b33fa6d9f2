#!/usr/bin/env python
"""Export the notebooks to the package: `nbdev_export`, with every target module written afresh.

A chapter notebook exports its method with `#| default_exp <method>` and its experiments with
`#| export experiments.<chapter>`. nbdev 2 (re)writes only the default module and *appends* cells to
any other target that already exists (nbdev 1 semantics), so a second `nbdev_export` would duplicate
the experiments modules. This script runs nbdev's own exporter with a module maker that writes every
target from scratch, refuses two notebooks writing one module, then builds `__init__.py` files and
`_modidx.py` as `nbdev_export` does. Usage (from the repository root): python tools/export.py
"""
import sys
from nbdev.config import get_config, add_init
from nbdev.doclinks import nbglob, _build_modidx
from nbdev.export import nb_export
from nbdev.maker import ModuleMaker

_WRITERS = {}

class FreshModule(ModuleMaker):
    "A `ModuleMaker` that always writes its module anew (is_new=True), once per export run."
    def __init__(self, dest, name, nb_path, is_new=True, **kw):
        super().__init__(dest, name, nb_path, is_new=True, **kw)
        prev = _WRITERS.setdefault(self.fname, nb_path)
        if prev != nb_path:
            sys.exit(f'export: {self.fname} is exported from both {prev} and {nb_path}: one notebook per module')

def main():
    cfg = get_config()
    for f in nbglob(as_path=True).sorted('name'): nb_export(f, mod_maker=FreshModule)
    add_init(cfg.lib_path)
    _build_modidx()

if __name__ == '__main__': main()
