"""Packaging for relrep_nb, driven by settings.ini (nbdev 2 layout)."""
from configparser import ConfigParser
from pathlib import Path
import setuptools

cfg = ConfigParser(delimiters=['='])
cfg.read('settings.ini', encoding='utf-8')
cfg = cfg['DEFAULT']

licenses = {'apache2': ('Apache Software License 2.0', 'OSI Approved :: Apache Software License')}
statuses = ['1 - Planning', '2 - Pre-Alpha', '3 - Alpha', '4 - Beta', '5 - Production/Stable',
            '6 - Mature', '7 - Inactive']
py_versions = '3.10 3.11 3.12 3.13'.split()
lic = licenses[cfg['license']]
min_python = cfg['min_python']

def reqs(key): return cfg.get(key, '').split()

requirements = reqs('requirements')
extras = {k[:-len('_requirements')]: reqs(k) for k in cfg
          if k.endswith('_requirements') and reqs(k)}
extras['all'] = sorted({r for k, v in extras.items() if k not in ('dev', 'docs', 'timm') for r in v})

setuptools.setup(
    name=cfg['lib_name'],
    license=lic[0],
    classifiers=['Development Status :: ' + statuses[int(cfg['status']) - 1],   # status 3 = '3 - Alpha'
                 'Intended Audience :: ' + cfg['audience'].title(),
                 'Natural Language :: ' + cfg['language'].title(),
                 'License :: ' + lic[1]]
                + ['Programming Language :: Python :: ' + v for v in py_versions[py_versions.index(min_python):]],
    url=cfg['git_url'],
    # namespace packages: the data folders under relrep_nb/datasets ship as package data without setuptools' warning
    packages=setuptools.find_namespace_packages(include=[cfg['lib_path'], cfg['lib_path'] + '.*']),
    include_package_data=True,
    package_data={cfg['lib_path']: reqs('package_data')},
    install_requires=requirements,
    extras_require=extras,
    python_requires='>=' + min_python,
    long_description=Path('README.md').read_text(encoding='utf-8') if Path('README.md').exists() else '',
    long_description_content_type='text/markdown',
    zip_safe=False,
    entry_points={'console_scripts': reqs('console_scripts'),
                  'nbdev': [f'{cfg["lib_path"]}={cfg["lib_path"]}._modidx:d']},
    version=cfg['version'],
    description=cfg['description'],
    author=cfg['author'],
    author_email=cfg['author_email'],
    keywords=cfg['keywords'],
)
