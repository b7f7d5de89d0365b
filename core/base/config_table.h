/* The one table of DAGGER_* settings: field, variable, kind, default, doc.
 * Read once by dg_config_load(); `dagger-config` prints it. Add a setting by
 * adding one line here; nothing else reads the environment. */
#ifndef DG_CONFIG_TABLE_H
#define DG_CONFIG_TABLE_H

#define DG_CONFIG_TABLE(X)                                                                    \
    X(num_threads, "DAGGER_NUM_THREADS", INT, "0",                                            \
      "CPU worker threads per rank; 0 = one per core of the process binding")                 \
    X(bind_threads, "DAGGER_BIND_THREADS", BOOL, "1",                                         \
      "pin worker threads to the cores of the process binding (hwloc)")                       \
    X(bind_submitter, "DAGGER_BIND_SUBMITTER", BOOL, "1",                                     \
      "where the ranks of a node run without a launcher's binding and share its cores, pin "  \
      "the thread that calls dagger_init (the one that submits) to its rank's cores, like "   \
      "its workers, until dagger_finalize; 0 = leave it as it is")                            \
    X(sched_slice_us, "DAGGER_SCHED_SLICE_US", INT, "0",                                      \
      "scheduler slice in microseconds each worker thread asks for (100-100000; Linux 6.12+): " \
      "a woken worker then preempts a busy process at once instead of at its next tick, "    \
      "which helps beside other busy processes and costs oversubscribed ranks; 0 = the "      \
      "kernel's default")                                                                     \
    X(spin_yield, "DAGGER_SPIN_YIELD", BOOL, "1",                                             \
      "spinning threads yield their core between checks (sched_yield), so that the rank's "   \
      "own threads sharing it run; 0 = they keep it, which is far faster beside other busy "  \
      "processes (each yield hands the core to them for a scheduler tick)")                 \
    X(hang_timeout, "DAGGER_HANG_TIMEOUT", DOUBLE, "0",                                       \
      "seconds without progress before each rank prints what it waits for; 0 = off")          \
    X(hang_exit, "DAGGER_HANG_EXIT", DOUBLE, "60",                                            \
      "with DAGGER_HANG_TIMEOUT: seconds more without progress before the rank exits (status " \
      "124) naming what it waits for, so a hung job ends; 0 = wait for ever")                 \
    X(trace_dir, "DAGGER_TRACE", STRING, "",                                                  \
      "directory for trace files (one per rank); empty = tracing off")                        \
    X(trace_deps, "DAGGER_TRACE_DEPS", BOOL, "1",                                             \
      "with DAGGER_TRACE: record each task's dependencies (dag, critical path); 0 = cheaper")   \
    X(check_uniformity, "DAGGER_CHECK_UNIFORMITY", BOOL, "0",                                 \
      "compare planning inputs across ranks at every region and collective call")             \
    X(gpu_direct, "DAGGER_GPU_DIRECT", INT, "-1",                                             \
      "send device buffers directly over UCX: 1 force on (an error at init where UCX cannot), " \
      "0 force off (host staging), -1 auto (on when UCX reports the memory type)")           \
    X(gpu_pipeline_piece, "DAGGER_GPU_PIPELINE_PIECE", SIZE, "4194304",                       \
      "host-staged transfers of device buffers between ranks larger than this many bytes go "  \
      "in pieces of it, so staging copies and the wire overlap; 0 = whole (no pieces)")       \
    X(gpu_streams, "DAGGER_GPU_STREAMS", INT, "4",                                            \
      "streams per device on which its tasks run (1-8): more let more independent tasks run "  \
      "at once on one device")                                                                \
    X(gpu_priority, "DAGGER_GPU_PRIORITY", BOOL, "1",                                         \
      "tasks with a priority above 0 (the next panel of a factorisation) run on streams of "  \
      "their own that the device schedules first (CUDA/HIP stream priorities): lookahead on " \
      "a GPU; 0 = every task on the DAGGER_GPU_STREAMS streams")                             \
    X(gpu_chain, "DAGGER_GPU_CHAIN", BOOL, "0",                                               \
      "1: a device task whose dependencies on the same device are queued goes onto a stream "  \
      "at once, behind their events, instead of waiting until the host sees them finish; "    \
      "off by default until measured on a GPU")                                               \
    X(gpu_wake, "DAGGER_GPU_WAKE", STRING, "armed",                                           \
      "how device work wakes a worker to poll its events: armed (at most one host function "  \
      "queued per stream, queued again by the poll while work is pending: fewer stalls of "   \
      "the stream) or each (a host function after every op)")                                \
    X(gpu_ipc, "DAGGER_GPU_IPC", BOOL, "1",                                                   \
      "device-to-device transfers between ranks of one node through IPC handles (the receiver " \
      "copies from the sender's device memory); 0 = stage them through host memory")        \
    X(gpu_peer, "DAGGER_GPU_PEER", BOOL, "1",                                                 \
      "copies between the devices of one rank go device to device where the devices have "    \
      "peer access (checked at init); 0 = stage them through host memory")                   \
    X(gpu_pin_host, "DAGGER_GPU_PIN_HOST", SIZE, "262144",                                    \
      "on a rank with devices, host buffers of at least this many bytes are page-locked (the " \
      "device runtime's pinned memory), so copies to and from devices are asynchronous and at " \
      "full speed; 0 = never")                                                                \
    X(test_devices, "DAGGER_TEST_DEVICES", INT, "0",                                          \
      "test devices per rank (0-15): a device kind for machines without a GPU (memory of "    \
      "its own, asynchronous streams); tasks opt in with DAGGER_PROC_TESTDEV; 0 = none")      \
    X(log_level, "DAGGER_LOG_LEVEL", INT, "1",                                                \
      "0 errors only, 1 warnings, 2 info, 3 debug")                                           \
    X(eager_limit, "DAGGER_EAGER_LIMIT", SIZE, "8192",                                        \
      "largest message payload sent eagerly; larger payloads go by rendezvous")               \
    X(peer_inflight, "DAGGER_PEER_INFLIGHT", INT, "64",                                       \
      "bound on sends in flight to one peer rank (flow control)")                             \
    X(peer_errors, "DAGGER_PEER_ERRORS", BOOL, "0",                                           \
      "UCX peer error handling (detects dead peers at once; disables shared memory in UCX)")   \
    X(start_timeout, "DAGGER_START_TIMEOUT", DOUBLE, "120",                                   \
      "seconds one start-up step (PMIx_Init, the start-up exchange, the UCX wire-up) may take; "\
      "past it the rank exits (status 124) naming the step; 0 = wait for ever")               \
    X(boot_tag, "DAGGER_BOOT_TAG", STRING, "",                                                \
      "start-up record tag: set one per test where a runner forks a process per test and rank")\
    X(task_window, "DAGGER_TASK_WINDOW", INT, "16384",                                        \
      "ops (launches, transfers, allocations) planned but not finished per rank before "      \
      "submission waits (back-pressure): the executor's ring of 512-byte slots (rounded up "  \
      "to a power of two, at least 64)")                                                     \
    X(slot_cache, "DAGGER_SLOT_CACHE", SIZE, "268435456",                                     \
      "bytes of temporary slots kept between regions per memory space")                       \
    X(huge_pages, "DAGGER_HUGE_PAGES", BOOL, "1",                                             \
      "host data blocks of 2 MiB or more start on a 2 MiB boundary and are advised to use "    \
      "transparent huge pages (madvise), so a block takes a page fault per 2 MiB at first "    \
      "touch instead of one per 4 KiB; 0 = plain allocations")                                 \
    X(plan_replay, "DAGGER_PLAN_REPLAY", INT, "65536",                                        \
      "regions of at most this many tasks are recorded; a region that repeats one's planning " \
      "inputs replays its plan instead of planning it again; 0 = plan every region")          \
    X(collect_pull, "DAGGER_COLLECT_PULL", BOOL, "1",                                         \
      "from an array's second dagger_array_collect or _scatter on (its first of 4 MiB or "    \
      "more), where every rank can read every other's memory (one host, process_vm_readv "    \
      "allowed), a collecting rank reads the tiles others own straight into its buffer, and " \
      "a scatter's rank 0 writes theirs straight from its own; 0 = they always travel as "   \
      "transfers (the job agrees: any rank's 0 turns it off)")

#endif
