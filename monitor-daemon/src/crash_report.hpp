// What hipstack-smid says when it dies of a fatal signal (SIGSEGV, SIGBUS, SIGILL, SIGFPE,
// SIGABRT): the signal, the faulting address, the thread's name and its return addresses as
// "object(+offset)" on stderr (the journal under systemd; `addr2line -e OBJECT OFFSET` with the
// build's debug files names the lines). Then it dies of the same signal, so systemd restarts it and
// a core dump is taken as before.
#pragma once

namespace hipstack::smid {

// Installs the report for the whole process; call once, early, from the main thread.
void install_crash_report() noexcept;

}  // namespace hipstack::smid
