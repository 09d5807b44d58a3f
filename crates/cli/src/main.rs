//! The `webdup` binary: parses flags, builds a validated config, calls the
//! library, and maps the outcome to an exit code.

#[path = "common.rs"]
mod cli;

// glibc's allocator grows per-thread arenas with an mprotect call at a time,
// which dominated a 100,000-document run; mimalloc does not.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::run()
}

/// Memory settings for commands that run a job and exit (not `serve`).
///
/// Freed memory is kept for the process's own reuse instead of being given
/// back to the system after mimalloc's purge delay. A job frees each
/// stage's data and allocates the next stage's: given back in between,
/// every page is faulted in and zeroed again. On 100,000 documents this cut
/// page faults from 5,700 to 1,100 in `cluster` (6.9 to 6.3 s) and from
/// 39,000-75,000 to 1,500 in `dcluster` (6.3-7.1 to 5.6-5.8 s); the peak
/// is unchanged.
///
/// Transparent huge pages are turned off for the process (Linux). mimalloc
/// asks for them on its arenas, and a job's memory is touched once, mostly:
/// a huge page is zeroed whole at its first touch, and on the 2-core VM
/// these figures come from that cost `dcluster -w 1` 3.3 to 3.5 s of system
/// time against 1.1 to 1.2 s with 4 KiB pages (9.2-9.4 s against 7.0-7.4 s
/// of wall time), while `cluster` ran alike either way (4.5-5.0 s).
fn tune_memory_for_a_job() {
    // mimalloc.h's `mi_option_purge_delay` (the same in mimalloc 2 and 3);
    // -1: never purge.
    const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
    // SAFETY: sets one of mimalloc's options, which it reads atomically.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes plain integers and changes only how
    // this process's later page faults are served; a failure (an old
    // kernel) leaves it as it was.
    unsafe {
        libc::prctl(
            libc::PR_SET_THP_DISABLE,
            1 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        );
    }
}
