# tests/unwind_classes.py - every class of disagreement between the unwind
# recipes and their oracles (the compiler's CFI, the kernel's ORC tables),
# with who is right and why, as found by reading the code at each place.
# Shared by tests/corpus-unwind.py and tests/kernel-unwind.py: each
# disagreement (tests/unwind-oracle --list) is matched, in order, against
# (procedure regex, class regex) and counted under the first explanation
# that matches; what matches none is "unexplained", and the tests bound it.
import collections
import json
import os
import re
import subprocess

# (procedure, class, explanation: who is right)
EXPLAINED = [
    # --- user space -----------------------------------------------------------
    (r"^_start$", r".",
     "_start, the outermost frame: its CFI marks the return address undefined and does not follow its "
     "pop of argc and its `and $-16,%rsp`; the recipes do (neither describes a caller: there is none)"),
    (r"^__mpn_(add|sub)mul_1$|^__mpn_mul_1$", r".",
     "glibc's hand-written __mpn_*mul_1: its CFI misses its pushes of rbx and rbp (rsp+8 throughout); "
     "the recipes follow them - recipes right"),
    (r"^(____longjmp_chk|__longjmp|__longjmp_cancel|setcontext)$", r".",
     "longjmp and setcontext restore another context: their CFI describes the frame being restored (CFA from "
     "the jmp_buf or ucontext in rdi), the recipes the real caller until SP is reloaded, then unknown - both "
     "right for what they describe"),
    (r"^(swapcontext|__start_context|__clone|clone3|__clone3|__clone_internal)$", r".",
     "a new stack (swapcontext, the child of clone): after SP is loaded from memory the CFI keeps its stale "
     "rsp+8, the recipes say unknown or work back from the return into the new context - no caller frame "
     "exists there, neither rule is one"),
    (r"^__restore_rt$", r".",
     "the signal trampoline: its CFI describes the interrupted context (the ucontext on the stack), the recipes "
     "a call frame - CFI right"),
    # zstd, clang -O2/-O3: `push 0xb0(%rsp); mov 0xb0(%rsp),%r12; push %r12` - clang's call-frame
    # optimization turns argument stores into pushes and emits each push's .cfi_adjust_cfa_offset
    # after the instructions scheduled behind it (readelf: the row changes one or two instructions
    # late).  Checked by hand at each of these addresses.
    (r"^(FIO_compressFilename_srcFile|ZSTD_buildSequencesStatistics|ZSTD_compressSeqStore_singleBlock)$",
     r"^oracle rsp\+N / recipe rsp\+N \(push\)$",
     "clang's CFI for argument pushes (X86CallFrameOptimization) changes the CFA one or two instructions after "
     "the push, behind the loads scheduled between; the recipes change it at the push - recipes right"),
    # zstd, gcc -O3: `mov %rsp,%rdi; sub $0x20,%rsp; call ZSTD_adjustCParams_internal; mov %rdi,%rsp`.
    # gcc's interprocedural register allocation (-fipa-ra) knows that local callee keeps rdi, so it
    # restores SP from it.  The recipes take rdi as clobbered by the call and reckon the CFA from
    # r13, which holds rsp+0xf0 from the prologue to the return: r13+272 is the CFI's rsp+512.
    (r"^ZSTD_estimateCCtxSize_usingCParams$", r"^oracle rsp\+N / recipe reg\+N \(unknown\)$",
     "SP restored after a call from a register gcc's -fipa-ra knows the local callee keeps (mov %rdi,%rsp): "
     "the recipes take the register as clobbered and reckon the same CFA from a callee-saved register "
     "holding an SP offset (r13+272 = rsp+512) - both right"),
    # --- the kernel -------------------------------------------------------------
    (r"sysvec_|_interrupt$|^common_interrupt$|^spurious_interrupt$|^xen_pv_evtchn_do_upcall$|^do_softirq|"
     r"^asm_|^__do_softirq|^page_fault_oops$",
     r"oracle rsp\+N / recipe (unknown|reg\+N)|oracle CFA expression|oracle CFA undefined|oracle \[reg\+N\]",
     "call_on_irqstack/call_on_stack: the asm moves SP to the IRQ or exception stack (mov %rsp,(%r11); mov "
     "%r11,%rsp): gcc's CFI keeps its stale rsp+N (wrong), ORC says *(rsp) (right), the recipes say unknown "
     "or the register that still holds the old SP"),
    (r"^(machine_check_poll|kill_me_maybe|do_sync_core|__static_call_update_early|text_poke_early|"
     r"ipi_sync_core|identify_cpu|__crash_kexec|.*sync_core.*)$", r"\(push\)|\(pop\)",
     "sync_core()'s iret_to_self and pushf/pop in inline asm: gcc's CFI does not see the asm's pushes; "
     "the recipes do - recipes right"),
    (r"^___bpf_prog_run$", r".",
     "the BPF interpreter's computed goto jumps through a table the CFG cannot bound; code reached only "
     "through it is carried on from the instruction before - recipes wrong there"),
    (r"^print_cpus_offline$|^pci_scan_slot$|^pci_add_new_bus$|^ftrace_hash_move_and_update_ops$", r".",
     "a function with an FDE but no symbol (the symbol table lost it), taken as the end of the procedure "
     "before it: the procedure's bounds are wrong, so are its recipes there (FDE-based procedure "
     "discovery reads .eh_frame, which vmlinux does not have: it keeps only .debug_frame)"),
    (r".", r"^oracle reg\+N / recipe rsp\+N \((entry|push)\)$|^oracle reg\+N / recipe reg\+N",
     "gcc's DRAP frames: right after lea 8(%rsp),%r10 the CFI reckons the CFA from r10 where the recipes "
     "still have SP (the same CFA), or from another register holding it - both right"),
    # restore_registers: resume from hibernation, mov 0x98(%rax),%rsp from the saved context.
    (r"^(__switch_to_asm|wakeup_long64|sev_verify_cbit|finish_task_switch.*|restore_registers)$", r".",
     "a task switch or a wake-up loads SP from memory (the next task's saved SP): ORC's hint says where the "
     "new frame is, the recipes say unknown - ORC right"),
    # ftrace_regs_caller: the direct-trampoline path swaps the flags with orig_rax, pops them and
    # RETs into the address left on the stack, under UNWIND_HINT_FUNC (arch/x86/kernel/ftrace_64.S).
    (r"^(arch_rethook_trampoline|__thunk_restore|entry_ibpb|ftrace_regs_caller)$", r".",
     "hand-written kernel assembly whose frames objtool is told by UNWIND_HINTs (rethook's fake return frame, "
     "the thunks' saved registers): ORC describes the hinted frame, the recipes the pushes as a call frame - "
     "ORC right where the hint says the frame is not a plain call"),
    # srso_alias_safe_ret (arch/x86/lib/retpoline.S): lea 8(%rsp),%rsp; ret - called by
    # srso_alias_return_thunk, it drops its own return address and returns to the one below it.
    (r"^srso_(alias_)?safe_ret$", r".",
     "the SRSO return thunk's `lea 8(%rsp),%rsp; ret` drops its own return address and returns to the one "
     "below (UNWIND_HINT_FUNC): ORC right, the recipes keep the call frame's rsp+0 at the ret"),
    (r".", r"^oracle CFA expression regs|^oracle CFA expression regs-partial|^oracle CFA undefined",
     "kernel entry code (ORC's pt_regs and end-of-stack hints): the frames are interrupt or syscall frames, not "
     "call frames - ORC right, the recipes describe a call frame"),
]


def run_oracle(oracle, binary, orc=False, env=None):
    """The oracle's counts and its disagreements [(addr, proc, class)]."""
    cmd = [oracle, "--list", "--examples", "0"] + (["--orc"] if orc else []) + [binary]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env)
    m = re.search(r"^RESULT (\{.*\})$", r.stdout, re.M)
    if not m:
        return None, [], r.stdout[-2000:] + r.stderr[-2000:]
    dis = []
    for line in r.stdout.splitlines():
        if line.startswith("D\t"):
            _, addr, proc, cls = line.split("\t", 3)
            dis.append((addr, proc, cls))
    return json.loads(m.group(1)), dis, ""


def explain(dis):
    """{explanation: count} and the unexplained [(addr, proc, class)]."""
    counts = collections.OrderedDict()
    unexplained = []
    for addr, proc, cls in dis:
        for p, c, why in EXPLAINED:
            if re.search(p, proc) and re.search(c, cls):
                counts[why] = counts.get(why, 0) + 1
                break
        else:
            unexplained.append((addr, proc, cls))
    return counts, unexplained


def report(tap, label, counts, dis):
    """The agreement table of one binary, as TAP comments."""
    tap.diag("%s: %d instructions, %d covered, CFA agrees on %d (%.3f%%); return address %d/%d; rbp %d/%d" % (
        label, counts["insns"], counts["covered"], counts["agree"],
        100.0 * counts["agree"] / max(1, counts["covered"]), counts["ra_agree"], counts["ra_compared"],
        counts["bp_agree"], counts["bp_compared"]))
    why, unexplained = explain(dis)
    for w, n in sorted(why.items(), key=lambda x: -x[1]):
        tap.diag("  %7d  %s" % (n, w))
    if unexplained:
        byc = collections.Counter((p, c) for _, p, c in unexplained)
        tap.diag("  %7d  unexplained, in %d procedures:" % (len(unexplained), len({p for _, p, _ in unexplained})))
        for (p, c), n in byc.most_common(12):
            tap.diag("           %5d %s [%s]" % (n, p, c))
    return unexplained
