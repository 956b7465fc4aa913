"""``xcbench list``, ``xcbench datasets`` and ``xcbench plugins``: what is registered."""
from __future__ import annotations

from .common import add_common


def cmd_list(args) -> int:
    from ..data import data_dir
    from ..contract.plugins import dataset_specs, method_specs, plugin_infos

    if args.what == "methods":
        from ..contract.availability import install_command, missing_modules

        for name, spec in sorted(method_specs().items()):
            missing = missing_modules(spec)
            note = f"  (not installed: {install_command(spec, missing)})" if missing else ""
            print(f"{name:<16} {spec.family:<9} {spec.description}  [plugin {spec.plugin}]"
                  + note)
        for info in plugin_infos():
            if info.resolves:
                pattern, what = info.resolves
                print(f"{pattern:<16} {'':<9} {what}  [plugin {info.name}]")
        print("(parameters and defaults of one: xcbench describe NAME)")
    else:
        from ..data.status import dataset_status

        where = data_dir(args.data_dir)
        for name, spec in sorted(dataset_specs().items()):
            print(f"{name:<22} {dataset_status(spec, where):<13} {spec.description}")
        print(f"(data directory: {where}; shape and sources of one: xcbench describe NAME)")
    return 0


def cmd_plugins(args) -> int:
    from ..contract.plugins import plugin_infos

    for info in plugin_infos():
        parts = []
        if info.methods:
            parts.append("methods: " + ", ".join(sorted(info.methods)))
        if info.datasets:
            parts.append("datasets: " + ", ".join(sorted(info.datasets)))
        if info.resolves:
            parts.append(f"method names {info.resolves[0]}: {info.resolves[1]}")
        print(f"{info.name} {info.version}: " + ("; ".join(parts) or "registers nothing"))
    return 0


def add_parser(sub) -> None:
    """Register ``xcbench list``, ``xcbench datasets`` and ``xcbench plugins``."""
    lister = sub.add_parser("list", help="list registered methods or datasets")
    lister.add_argument("what", choices=["methods", "datasets"])
    add_common(lister, out=False)
    lister.set_defaults(func=cmd_list)

    datasets = sub.add_parser("datasets", help="list datasets and whether they are available")
    add_common(datasets, out=False)
    datasets.set_defaults(func=cmd_list, what="datasets")

    plugins = sub.add_parser("plugins", help="list loaded plugins and what they registered")
    plugins.set_defaults(func=cmd_plugins)
