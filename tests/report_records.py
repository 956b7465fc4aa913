"""Hand-made result records for report tests (no fitting)."""


def record(method, dataset="d", params=None, seed=0, top1=0.25, p50_ms=0.05, cpu="CPU A",
           host=None, latencies=None, path_cost=None, status="ok", k=10, **extra):
    """A minimal ``ok`` record of ``method`` on ``dataset`` with the given measurements."""
    env = {"cpu": cpu, "platform": "Linux-x", "cpu_count": 2, "threads": 1}
    if host:
        env["host"] = host
    return {"schema_version": 2, "key": f"{method}-{dataset}-{params}-{seed}-{cpu}-{host}",
            "method": method, "params": params or {}, "dataset": dataset, "seed": seed,
            "status": status, "error": None if status == "ok" else "boom\nmore",
            "dataset_stats": {"n_classes": k}, "environment": env,
            "metrics": {"top1_error": top1, "top5_error": top1 / 2, "coverage": 1.0,
                        "perplexity": 3.0},
            "summary": {"latency_p50_ms": p50_ms, "fit_seconds": 1.23456,
                        "compile_seconds": 0.5, "fit_wall_seconds": 1.73456},
            "memory": {"model_pickle_bytes": 123456},
            "timings": {"latency_seconds": latencies or []},
            "path_cost": None if path_cost is None else {"mean": path_cost}, **extra}


def write_store(directory, records):
    """Write ``records`` as ``directory/results.jsonl``; return the directory."""
    import json

    (directory / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return directory
