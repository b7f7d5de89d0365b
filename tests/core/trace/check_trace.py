#!/usr/bin/env python3
"""End-to-end test of tracing: runs trace_prog under DAGGER_TRACE (with N
ranks through dagger-run), then every dagger-trace command, and checks the
outputs against what the program says it did (expected-<rank>.txt).

usage: check_trace.py TOOL PROG LAUNCHER NRANKS WORKDIR"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

TOOL, PROG, LAUNCHER, NRANKS, WORK = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def kill_job(p):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.communicate(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


def run_prog(name, mode=None, env_extra=None, timeout=120, until=None):
    """Runs trace_prog on NRANKS ranks into WORK/name. With until, a job
    that hangs on purpose is killed once until(trace) holds (or at timeout):
    the launcher may queue it first, so no fixed time fits."""
    trace, out = os.path.join(WORK, name), os.path.join(WORK, name + "-out")
    for d in (trace, out):
        shutil.rmtree(d, ignore_errors=True)
    os.makedirs(out)
    env = dict(os.environ, DAGGER_TRACE=trace, DAGGER_LOG_LEVEL="0")
    env.pop("DAGGER_CHECK_UNIFORMITY", None)
    env.update(env_extra or {})
    cmd = [LAUNCHER, "-n", str(NRANKS), PROG, out] + ([mode] if mode else [])
    # A session of its own: a job that hangs is killed with all its ranks.
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    deadline = time.time() + timeout
    while until and p.poll() is None and time.time() < deadline and not until(trace):
        time.sleep(0.5)
    try:
        text, _ = p.communicate(timeout=0.1 if until else max(1, deadline - time.time()))
        rc = p.returncode
        if rc != 0 and not until:
            print(text)
    except subprocess.TimeoutExpired:
        kill_job(p)
        rc = None
    return trace, out, rc


def tool(*args):
    p = subprocess.run([TOOL] + list(args), capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def expected(out):
    ranks = []
    for r in range(NRANKS):
        d = {"codelets": {}}
        with open(os.path.join(out, "expected-%d.txt" % r)) as f:
            for line in f:
                w = line.split()
                if w[0] == "codelet":
                    d["codelets"][w[1]] = int(w[2])
                else:
                    d[w[0]] = int(w[1])
        ranks.append(d)
    return ranks


def check_summary(trace, exp):
    rc, text, err = tool("summary", trace)
    check(rc == 0, "summary exits 0 (%s)" % err.strip())
    m = re.search(r"^Tasks: (\d+) planned, (\d+) ran", text, re.M)
    check(m and int(m.group(1)) == exp[0]["tasks"] and int(m.group(2)) == exp[0]["tasks"],
          "summary task count %s equals the program's %d" % (m and m.group(0), exp[0]["tasks"]))
    for name, count in exp[0]["codelets"].items():
        m = re.search(r"^  %s\s+(\d+) " % re.escape(name), text, re.M)
        check(m and int(m.group(1)) == count, "codelet %s ran %d times (summary: %s)"
              % (name, count, m and m.group(1)))
    # The run-time columns: mean, median and p90 within the longest.
    tv = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    for name in exp[0]["codelets"]:
        m = re.search(r"^  %s\s+\d+\s+%s\s+%s\s+%s\s+%s\s+%s\s+[\d.]+%%$"
                      % ((re.escape(name),) + (r"([\d.]+) (ns|us|ms|s)",) * 5), text, re.M)
        ok = m is not None
        if ok:
            total, mean, median, p90, mx = (float(m.group(2 * i + 1)) * tv[m.group(2 * i + 2)]
                                            for i in range(5))
            slack = 1.001  # the printed times are rounded
            ok = (0 < median <= p90 * slack and p90 <= mx * slack and mean <= mx * slack
                  and mx <= total * slack)
        check(ok, "codelet %s: median <= p90 <= max, mean <= max <= total (summary: %s)"
              % (name, m and m.group(0)))
    sent = sum(e["bytes_sent"] for e in exp)
    # Ranks that take part in every transfer count them all (region stats).
    transfers = max(e["transfers"] for e in exp)
    m = re.search(r"^  total: (\d+) messages, .* \((\d+) bytes\)", text, re.M)
    check(m and int(m.group(2)) == sent and int(m.group(1)) == transfers,
          "bytes moved %s equal the program's %d bytes in %d transfers"
          % (m and m.group(0), sent, transfers))
    for r in range(NRANKS):
        check(re.search(r"^  rank %d worker 0: " % r, text, re.M), "utilisation of rank %d" % r)
    # The host's threads against its CPUs, from job.meta (every rank here
    # runs on this machine, so the threads are the ranks' processors).
    cpus = len(os.sched_getaffinity(0))
    for r in range(NRANKS):
        m = re.search(r"^  rank %d: .*, (\d+) CPUs to run on$" % r, text, re.M)
        check(m and 1 <= int(m.group(1)) <= os.cpu_count(),
              "rank %d's CPUs to run on (%s; this process has %d)" % (r, m and m.group(1), cpus))
    procs = [int(p) for p in re.findall(r"^  rank \d+: host [^,]+, pid \d+, (\d+) processors", text, re.M)]
    m = re.search(r"^  host \S+: (\d+) ranks?, (\d+) threads that run tasks or plan .*, (\d+) online CPUs(:?)",
                  text, re.M)
    check(m and int(m.group(1)) == NRANKS and int(m.group(2)) == sum(procs)
          and int(m.group(3)) == os.cpu_count()
          and (m.group(4) == ":") == (sum(procs) > os.cpu_count()),
          "the host line: %d ranks, %d threads, %d online CPUs, oversubscribed when more threads "
          "(summary: %s)" % (NRANKS, sum(procs), os.cpu_count(), m and m.group(0)))
    # Tasks running at once, while submitting and while waiting at region
    # ends: per rank, plausible means and shares, the two times summing to
    # the wall time.
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    def secs(v, u):
        return float(v) * unit[u]
    m = re.search(r"^Wall time: ([\d.]+) (ns|us|ms|s) ", text, re.M)
    wall = m and secs(m.group(1), m.group(2))
    for r in range(NRANKS):
        m = re.search(r"^  rank %d \((\d+) processors.*\): while submitting ([\d.]+) (ns|us|ms|s): "
                      r"([\d.]+) running, none ([\d.]+)%%; while waiting at region ends ([\d.]+) "
                      r"(ns|us|ms|s): ([\d.]+) running, none ([\d.]+)%%$" % r, text, re.M)
        ok = m is not None and wall is not None
        if ok:
            g = m.groups()
            procs, both = int(g[0]), secs(g[1], g[2]) + secs(g[5], g[6])
            ok = (0 <= float(g[3]) <= procs and 0 <= float(g[7]) <= procs
                  and 0 <= float(g[4]) <= 100 and 0 <= float(g[8]) <= 100
                  and abs(both - wall) <= 0.02 * wall)
        check(ok, "rank %d: tasks running at once while submitting and waiting, the two times "
              "summing to the wall time %s (summary: %s)" % (r, wall, m and m.group(0)))
    # Regions against their submission: per rank, its regions with tasks,
    # the median share spent submitting, and how many of their tasks ended
    # while tasks were still being submitted (at most those it ran).
    subs = 0
    for r in range(NRANKS):
        m = re.search(r"^  rank %d: (\d+) regions, before the region-end wait a median ([\d.]+)%% "
                      r"of a region's time; (\d+) of its (\d+) tasks \(([\d.]+)%%\) ended before "
                      r"that wait began" % r, text, re.M)
        none = re.search(r"^  rank %d: no region with its begin, its wait and tasks run here$" % r,
                         text, re.M)
        ok = (m is not None) != (none is not None)
        if m:
            n, share, ended, ran = int(m.group(1)), float(m.group(2)), int(m.group(3)), int(m.group(4))
            ok = ok and n >= 1 and 0 <= share <= 100 and ended <= ran <= exp[0]["tasks"]
            subs += 1
        check(ok, "rank %d: regions against their submission (summary: %s)"
              % (r, (m or none) and (m or none).group(0)))
    check(subs >= 1, "some rank's regions against their submission")
    # Messages: every rank's memory-space actor handled its allocations, and
    # every transfer is one dagger.mem.rewrap message from the sending rank's
    # memory-space actor to the receiving rank's.
    msgs = re.findall(r"^  (\d+)\s+(\S+)\s+(dagger\.\S+)\s+rank (\d+), (.+?)\s+(\d+)$", text, re.M)
    for r in range(NRANKS):
        check(any(int(m[0]) == r and m[1] == "mem:host" and m[2] == "dagger.mem.alloc" for m in msgs),
              "rank %d: mem:host handled dagger.mem.alloc messages (summary)" % r)
    launches = sum(int(m[5]) for m in msgs if m[2] == "dagger.proc.launch" and m[1].startswith("cpu:"))
    check(launches == exp[0]["tasks"],
          "every task is one dagger.proc.launch handled by a cpu: processor actor (%d of %d)"
          % (launches, exp[0]["tasks"]))
    rewrap = [m for m in msgs if m[2] == "dagger.mem.rewrap"]
    check(all(m[1] == "mem:host" and m[4] == "mem:host" and int(m[3]) != int(m[0]) for m in rewrap),
          "dagger.mem.rewrap goes from one rank's mem:host to another's: %s" % rewrap)
    check(sum(int(m[5]) for m in rewrap) == transfers,
          "one dagger.mem.rewrap message per transfer (%d transfers, messages: %s)"
          % (transfers, rewrap))
    check("Critical path:" in text and "Top waits:" in text and "per task" in text,
          "critical path, waits and planner cost are reported")
    if NRANKS > 1:
        check(re.search(r"; \d+ uniformity checks, ", text), "uniformity checks are recorded")
    return text


def check_perfetto(trace, exp):
    path = os.path.join(WORK, "trace.json")
    rc, _, err = tool("perfetto", trace, "-o", path)
    check(rc == 0, "perfetto exits 0 (%s)" % err.strip())
    with open(path) as f:
        doc = json.load(f)  # raises on invalid JSON: the test fails
    evs = doc["traceEvents"]
    names = {(e["pid"], e.get("tid"), e["args"]["name"]) for e in evs
             if e["ph"] == "M" and e["name"] in ("thread_name", "process_name")}
    meta = open(os.path.join(trace, "job.meta")).read()
    for r in range(NRANKS):
        workers = int(re.search(r"^rank %d workers (\d+)" % r, meta, re.M).group(1))
        check(any(p == r + 1 and t is None and n.startswith("rank %d" % r) for p, t, n in names),
              "a process track for rank %d" % r)
        for w in range(workers):
            check((r + 1, w + 1, "worker %d" % w) in names, "a track for rank %d worker %d" % (r, w))
        check((r + 1, 200000, "memory space 0 (host): memory-space actor mem:host") in names,
              "a memory-space track on rank %d, the memory-space actor's" % r)
        check(any(e["ph"] == "i" and e["pid"] == r + 1 and e.get("tid") == 200000 and
                  e["name"] == "dagger.mem.alloc" for e in evs),
              "rank %d: the memory-space actor's messages are on its track" % r)
        launch_tids = {e.get("tid") for e in evs if e["ph"] == "i" and e["pid"] == r + 1 and
                       e["name"] == "dagger.proc.launch"}
        check(launch_tids and launch_tids <= set(range(1, workers + 1)) | {100000},
              "rank %d: launches are on the processor actors' tracks (workers', or the "
              "submitting thread's for cpu:submit): %s" % (r, launch_tids))
    tasks = [e for e in evs if e["ph"] == "X" and e.get("cat") == "task"]
    check(len(tasks) == exp[0]["tasks"], "%d task slices for %d tasks" % (len(tasks), exp[0]["tasks"]))
    flows = [e for e in evs if e["ph"] in "sf" and e.get("cat") == "transfer"]
    transfers = max(e["transfers"] for e in exp)
    check(len(flows) == 2 * transfers, "a flow per transfer (%d events for %d transfers)"
          % (len(flows), transfers))
    deps = [e for e in evs if e["ph"] == "s" and e.get("cat") == "dependency"]
    check(len(deps) > 0, "task dependencies are flows")


def check_svg(trace, exp):
    path = os.path.join(WORK, "timeline.svg")
    rc, _, err = tool("svg", trace, "-o", path)
    check(rc == 0, "svg exits 0 (%s)" % err.strip())
    root = ET.parse(path).getroot()  # raises on invalid XML
    check(root.tag.endswith("svg"), "the SVG root element is <svg>")
    texts = [t.text or "" for t in root.iter() if t.tag.endswith("text")]
    for r in range(NRANKS):
        check("rank %d worker 0" % r in texts, "a row for rank %d worker 0" % r)
    for name in exp[0]["codelets"]:
        check(name in texts, "the legend names codelet %s" % name)
    if shutil.which("xmllint"):
        check(subprocess.run(["xmllint", "--noout", path]).returncode == 0, "xmllint accepts the SVG")


def check_dag(trace, exp):
    path = os.path.join(WORK, "dag.dot")
    rc, _, err = tool("dag", trace, "-o", path)
    check(rc == 0, "dag exits 0 (%s)" % err.strip())
    text = open(path).read()
    check(text.startswith("digraph") and text.rstrip().endswith("}"), "dag is a DOT digraph")
    nodes = re.findall(r"^    t(\d+) \[label=", text, re.M)
    check(len(nodes) == exp[0]["tasks"], "a node per task (%d of %d)" % (len(nodes), exp[0]["tasks"]))
    # Cholesky: potrf of the first tile feeds the three trsm of its column.
    check(len(re.findall(r"^  t(\d+) -> t(\d+)", text, re.M)) >= 3 * 4, "dependency edges")
    for r in range(NRANKS):
        check("cluster_rank%d" % r in text, "placement cluster of rank %d" % r)


def check_no_deps():
    """DAGGER_TRACE_DEPS=0: the same tasks, no dependencies, and the tools say so."""
    trace, out, rc = run_prog("nodeps", env_extra={"DAGGER_TRACE_DEPS": "0"})
    check(rc == 0, "the program traced without dependencies succeeds (rc %s)" % rc)
    if rc != 0:
        return
    rc, text, err = tool("summary", trace)
    check(rc == 0 and "Critical path: not known (recorded with DAGGER_TRACE_DEPS=0" in text,
          "summary says the critical path is not known without dependencies (%s)" % err.strip())
    path = os.path.join(WORK, "dag-nodeps.dot")
    rc, _, err = tool("dag", trace, "-o", path)
    text = open(path).read() if rc == 0 else ""
    check(rc == 0 and "DAGGER_TRACE_DEPS=0" in err and not re.search(r"^  t\d+ -> t", text, re.M)
          and re.search(r"^    t\d+ \[label=", text, re.M),
          "dag without dependencies: nodes, no edges, and a note (%s)" % err.strip())


def corrupt(trace, name, edit):
    bad = os.path.join(WORK, "bad-" + name)
    shutil.rmtree(bad, ignore_errors=True)
    shutil.copytree(trace, bad)
    edit(bad)
    rc, out, err = tool("summary", bad)
    return bad, rc, err


def patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def check_corrupt(trace):
    r0 = lambda d: os.path.join(d, "rank-0.dgt")
    size = os.path.getsize(r0(trace))
    first_block = 128
    block_len = int.from_bytes(open(r0(trace), "rb").read()[first_block + 4:first_block + 8], "little")
    cases = [
        ("header", lambda d: os.truncate(r0(d), 100), "offset 100", "truncated"),
        ("magic", lambda d: patch(r0(d), 0, b"XX"), "offset 0", "not a Dagger-C trace"),
        ("version", lambda d: patch(r0(d), 8, b"\x07"), "offset 8", "version 7"),
        ("blockhdr", lambda d: os.truncate(r0(d), first_block + 10), "offset %d" % first_block,
         "truncated"),
        ("cut", lambda d: os.truncate(r0(d), first_block + 24 + block_len // 2),
         "offset %d" % first_block, "runs past the end"),
        ("payload", lambda d: patch(r0(d), first_block + 24 + 16, b"\xff\xfe\xfd"),
         "offset %d" % first_block, "checksum"),
        ("marker", lambda d: patch(r0(d), first_block, b"\0\0\0\0"), "offset %d" % first_block,
         "no block marker"),
        ("job", lambda d: open(os.path.join(d, "job.meta"), "w").write(
            open(os.path.join(trace, "job.meta")).read().replace("job_id ", "job_id 1")),
         "offset 40", "job id"),
        ("missing", lambda d: os.remove(r0(d)), "rank-0.dgt", "cannot open"),
    ]
    for name, edit, where, why in cases:
        bad, rc, err = corrupt(trace, name, edit)
        check(rc == 1 and "rank-0.dgt" in err and where in err and why in err,
              "%s: rejected naming rank-0.dgt, '%s' and '%s' (rc %d: %s)" % (name, where, why, rc, err.strip()))
    check(size > first_block + 24, "the trace has blocks")


def check_hang():
    trace, out, rc = run_prog("hang", "hang", {"DAGGER_HANG_TIMEOUT": "0.4"})
    check(rc == 0, "the hang program finishes (rc %s)" % rc)
    rc, text, err = tool("hang", trace)
    print(text)
    check(rc == 0, "hang exits 0 (%s)" % err.strip())
    check(re.search(r"task 1 \(sleepy, op \d+\): running on worker \d+", text),
          "hang names the running task as what everything waits for")
    if NRANKS > 1:
        check(re.search(r"rank 1 recv tag 1:0 from rank 0 \(op \d+\)\n\s+-> rank 0 send tag 1:0", text),
              "hang follows rank 1's receive to rank 0's send")


def check_diverge():
    # No longer a hang for good: the region's end finds the divergence once
    # rank 0's slow task is done, and the job ends by itself.
    trace, out, rc = run_prog("diverge", "diverge", {"DAGGER_HANG_TIMEOUT": "0.3"})
    check(rc not in (0, None), "the diverging program ends by itself with an error (rc %s)" % rc)
    rc, text, err = tool("hang", trace)
    print(text)
    check(re.search(r"rank 0: at [\d.]+ ms \(no progress within DAGGER_HANG_TIMEOUT\): .*1 task running",
                    text), "hang shows rank 0's dump, its slow task running")
    check(rc == 0 and "rank 0 never planned a send of tag 1:0 to rank 1: it finished planning "
          "region 1 at" in text,
          "hang names the message rank 0 never planned (rc %d: %s)" % (rc, err.strip()))


def main():
    os.makedirs(WORK, exist_ok=True)
    trace, out, rc = run_prog("known", env_extra={"DAGGER_CHECK_UNIFORMITY": "1"})
    check(rc == 0, "the traced program succeeds (rc %s)" % rc)
    if rc != 0:
        return
    exp = expected(out)
    print(check_summary(trace, exp))
    check_perfetto(trace, exp)
    check_svg(trace, exp)
    check_dag(trace, exp)
    check_no_deps()
    check_corrupt(trace)
    check_hang()
    if NRANKS > 1:
        check_diverge()


main()
print("%d failures" % len(failures))
sys.exit(1 if failures else 0)
