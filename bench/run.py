"""Run the benchmarks and print medians with ratios to gradpipe, all measured in this one run.

    python -m bench.run                 # every workload, every installed framework
    python -m bench.run tiny mlp        # some workloads
    python -m bench.run --quick         # fewer samples (a smoke run)
    python -m bench.run startup memory  # start-up of python -m runner; peak memory (bench/process.py)
    python -m bench.run experiments     # every shipped experiment end to end (bench/experiments.py)
    python -m bench.run clip_adam       # one of them: the runner, torch and JAX/optax alternately

The frameworks of a workload are timed alternately (a sample of each in turn, see
``_time_alternately``), so that a shared machine's load changes all of them alike. The machine
is shared and noisy: compare the ratios of one run, not times across runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from . import experiments, process
from .workloads import WORKLOADS, Unavailable

# Measured in fresh processes (bench/process.py) rather than by timing a step function.
PROCESS_WORKLOADS = ("startup", "memory")


def _time_alternately(steps, min_sample_s, samples, clock=time.perf_counter):
    """Median seconds per call of each step function, their samples taken in turn (one of
    each, then again), so that a shared machine's load changes all of them alike."""
    calls = {}
    for name, step in steps.items():
        warm_up = time.perf_counter() + 0.5  # first runs compile (plans, jit; numba from the
        for i in range(1_000_000):           # rnn op's 51st run): at least 3 calls and 0.5 s
            step()
            if i >= 2 and time.perf_counter() > warm_up:
                break
        n = 1
        while True:
            t0 = clock()
            for _ in range(n):
                step()
            elapsed = clock() - t0
            if elapsed >= min_sample_s:
                break
            n *= 2 if elapsed == 0 else max(2, min(10, int(min_sample_s / elapsed) + 1))
        calls[name] = n
    times = {name: [] for name in steps}
    for _ in range(samples):
        for name, step in steps.items():
            t0 = clock()
            for _ in range(calls[name]):
                step()
            times[name].append((clock() - t0) / calls[name])
    return {name: statistics.median(t) for name, t in times.items()}


def _run_experiment(name, min_s, samples):
    """One shipped experiment end to end: steps/s of the runner, torch and JAX, alternately,
    in CPU time of the process (all on one thread): time spent waiting for a core of a shared
    machine does not count."""
    steps, results = {}, {}
    for fw in experiments.FRAMEWORKS:
        try:
            steps[fw] = experiments.make(fw, name)
        except Unavailable as exc:
            results[fw] = f"skipped ({exc})"
        except Exception as exc:  # a broken variant must not hide the others
            results[fw] = f"failed ({type(exc).__name__}: {exc})"
    results.update(_time_alternately(steps, min_s, samples, clock=time.process_time))
    _print_rows(f"e2e {name}", {fw: results[fw] for fw in experiments.FRAMEWORKS},
                steps_per_s=True)


def _fmt(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} us"
    return f"{seconds * 1e3:8.2f} ms"


def _print_rows(label, results, steps_per_s=False):
    """One line per framework: its median (or why it is missing), its ratio to gradpipe (and
    the steps per second it means)."""
    base = results.get("gradpipe")
    label = f"{label:<22}" if len(label) < 22 else label + " "
    for fw, value in results.items():
        if isinstance(value, str):
            print(f"{label}{fw:<16}{value}")
            continue
        ratio = f"{value / base:10.2f}x" if isinstance(base, float) else ""
        rate = f"{1 / value:12.0f} steps/s" if steps_per_s else ""
        print(f"{label}{fw:<16}{_fmt(value):>12}{ratio:>14}{rate}")
    sys.stdout.flush()


def _print_bandwidth(measured):
    """Adam + clip as a fraction of the triad's memory bandwidth, when both were measured."""
    if "adam_clip" not in measured or "triad" not in measured:
        return
    from .workloads import ADAM_BYTES_PER_PARAM, TRIAD_BYTES

    size, triads = measured["triad"]
    rates = [size * TRIAD_BYTES / t for t in triads.values() if isinstance(t, float)]
    if not rates:
        return
    bandwidth = max(rates)
    params, adam = measured["adam_clip"]
    print(f"\ntriad bandwidth {bandwidth / 1e9:.1f} GB/s (the faster of {', '.join(triads)}); "
          f"adam_clip at {ADAM_BYTES_PER_PARAM} bytes per parameter:")
    for fw, t in adam.items():
        if isinstance(t, float):
            rate = params * ADAM_BYTES_PER_PARAM / t
            print(f"  {fw:<16}{rate / 1e9:6.1f} GB/s  {rate / bandwidth:6.0%} of triad")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [*WORKLOADS, *PROCESS_WORKLOADS, "experiments", *experiments.EXPERIMENTS]
    parser.add_argument("workloads", nargs="*", default=names, help=", ".join(names))
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    unknown = [name for name in args.workloads if name not in names]
    if unknown:
        parser.error(f"unknown workload {', '.join(unknown)} (choose from {', '.join(names)})")
    samples, min_s = (3, 0.05) if args.quick else (7, 0.2)
    print(f"{'workload':<22}{'framework':<16}{'median':>12}{'vs gradpipe':>14}")
    memory_table = None
    measured = {}
    if all(n == "experiments" or n in experiments.EXPERIMENTS for n in args.workloads):
        experiments.single_threaded_jax()
    for name in args.workloads:
        if name == "experiments" or name in experiments.EXPERIMENTS:
            for experiment in experiments.EXPERIMENTS if name == "experiments" else [name]:
                _run_experiment(experiment, min_s, samples)
            continue
        if name == "startup":
            try:
                results = process.startup(runs=samples)
            except Exception as exc:  # the other workloads still run
                results = {"gradpipe": f"failed ({type(exc).__name__}: {exc})"}
            _print_rows("startup", results)
            continue
        if name == "memory":
            frameworks = ["gradpipe", "numpy"] if args.quick else None
            memory_table = process.format_memory(process.memory(frameworks=frameworks))
            continue
        make, sizes, frameworks = WORKLOADS[name]
        for size in sizes:
            label = name if size is None else f"{name}[{size:g}]"
            results, steps = {}, {}
            for fw in frameworks:
                try:
                    step = make(fw, size) if size is not None else make(fw)
                    step()  # a variant that fails, fails here alone
                    steps[fw], results[fw] = step, None  # None keeps the row's place
                except Unavailable as exc:
                    results[fw] = f"skipped ({exc})"
                except Exception as exc:  # a broken variant must not hide the others
                    results[fw] = f"failed ({type(exc).__name__}: {exc})"
            results.update(_time_alternately(steps, min_s, samples))
            _print_rows(label, results)
            measured[name] = (size, results)
    _print_bandwidth(measured)
    if memory_table is not None:
        print()
        print(memory_table)


if __name__ == "__main__":
    main()
