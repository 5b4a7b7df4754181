/* _loopscope.c - the CPython module the GDB extension stands on.
 *
 * It owns the bridge from Python to libloopscope's public API (loopscope.h)
 * and nothing else: gdb-ext/loopscope.py does the GDB side (address
 * translation, commands, breakpoints).  Built against the Python that GDB
 * embeds and loaded into GDB's process, so it must never crash GDB: every
 * failure becomes a Python exception (_loopscope.Error).
 *
 *   m = _loopscope.Module(path, cache=True, loops=True, jobs=0, cache_dir=None,
 *                         debug_file_path=None, progress=None)
 *       progress: None, or progress(done, total) called every 0.1 s during
 *       the analysis; Ctrl-C (KeyboardInterrupt) or its exception stops it
 *   m.path, m.debug_path, m.build_id, m.has_dwarf, m.from_cache, m.warnings
 *   m.lookup(addr)          -> [scope dict, ...] outermost (proc) first; [] if none
 *   m.depth(addr)           -> the chain's full length (longer ones are cut in lookup())
 *   m.chain(addr)           -> the lookup object of design.md as a dict: "addr", "module",
 *                              "chain" (scope dicts), "cut" (scopes left out, 0 if none),
 *                              "depth" (the uncut length), "error" (None, or why the chain
 *                              is empty): every field ls_write_chain_json writes
 *   m.chains([addr, ...])   -> [m.chain(addr), ...] in one call (a backtrace's frames)
 *   m.changed               -> the file on disk is not the one analyzed (symbol() refuses)
 *   m.symbol(name)          -> (addr, size) or None
 *   m.kernel_layout()       -> [(section, offset from the base, size, addr), ...]: a .ko's
 *                              code sections where the kernel's module loader puts them
 *   m.proc_at(addr)         -> proc scope dict with "children" (no stmts unless asked)
 *   m.procs()               -> [proc scope dict, ...] (no children)
 *   m.inlined(name)         -> [(proc dict, inline scope dict with "children"), ...]:
 *                              every inlined call of function NAME, in its host procedure
 *   m.loops_at(line, file=None) -> [(proc dict, loop dict), ...]: every loop whose line is
 *                              LINE (in FILE, matched as GDB matches FILE:LINE): each copy
 *                              of a loop inlined many times
 *
 *   sections(path)          -> {name: address} of an ELF file's allocated sections (no analysis)
 *   build_id(path)          -> the ELF file's build-id in hex, or None (no analysis)
 *
 * A scope dict carries "kind" and "ranges" always, and the fields its kind
 * has in the CLI's JSON (design.md): name, linkage_name and unresolved_jumps
 * (proc), call_file, call_line and call_column (inline), file, line, and
 * header, depth, irreducible, entries, exits and backedges (loop).
 * Addresses are link-time addresses, as loopscope.h defines them.
 *
 * Strings (names, file names, paths) are the bytes DWARF and the file
 * system hold, decoded as UTF-8 with surrogate escapes: a byte that is not
 * UTF-8 stays recoverable (os.fsencode gives the bytes back), so a path
 * still names its file and JSON can escape it instead of replacing it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "loopscope.h"

typedef struct {
	PyObject_HEAD
	ls_module *m;
	PyObject *warnings; /* list of str: what the analysis could not do */
	struct stat st;     /* the file when it was analyzed: see file_changed() */
} ModuleObject;

static PyObject *LsError; /* _loopscope.Error */

/* Warnings arrive while the GIL is released, maybe from several analysis
 * threads at once, so they are collected in C and turned into a list after. */
struct warn_sink {
	pthread_mutex_t lock;
	char **messages;
	size_t count, cap;
};

static void
warn_collect(void *ctx, const char *message)
{
	struct warn_sink *sink = ctx;
	pthread_mutex_lock(&sink->lock);
	if (sink->count == sink->cap) {
		size_t cap = sink->cap ? sink->cap * 2 : 8;
		char **grown = realloc(sink->messages, cap * sizeof *grown);
		if (!grown) {
			pthread_mutex_unlock(&sink->lock);
			return; /* a lost warning is better than a crash in GDB */
		}
		sink->messages = grown;
		sink->cap = cap;
	}
	char *copy = strdup(message);
	if (copy)
		sink->messages[sink->count++] = copy;
	pthread_mutex_unlock(&sink->lock);
}

/* ---- progress and Ctrl-C ----------------------------------------------------
 *
 * With a progress callable, the analysis runs on a thread of its own while
 * GDB's thread (holding the GIL only between waits) calls progress(done,
 * total) every 0.1 s and checks for Ctrl-C: GDB turns SIGINT into a Python
 * KeyboardInterrupt while Python runs, which PyErr_CheckSignals reports.
 * Then the analysis is asked to stop (the core checks between procedures)
 * and the exception goes back to the caller, GDB's prompt intact. */
struct open_job {
	const char *path;
	ls_options opt;
	ls_error err;
	ls_module *m;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int finished, stop;
	size_t done, total;
};

static int
job_progress(void *ctx, size_t done, size_t total)
{
	struct open_job *job = ctx;
	pthread_mutex_lock(&job->lock);
	job->done = done;
	job->total = total;
	int stop = job->stop;
	pthread_mutex_unlock(&job->lock);
	return stop;
}

static void *
job_main(void *arg)
{
	struct open_job *job = arg;
	ls_module *m = ls_module_open(job->path, &job->opt, &job->err);
	pthread_mutex_lock(&job->lock);
	job->m = m;
	job->finished = 1;
	pthread_cond_signal(&job->cond);
	pthread_mutex_unlock(&job->lock);
	return NULL;
}

/* ls_module_open on a thread, PROGRESS called meanwhile.  NULL with a Python
 * exception set (KeyboardInterrupt, or PROGRESS's own) when interrupted;
 * else the module, or NULL with ERR set. */
static ls_module *
open_with_progress(const char *path, const ls_options *opt, PyObject *progress, ls_error *err)
{
	struct open_job job = {.path = path, .opt = *opt};
	job.opt.progress_fn = job_progress;
	job.opt.progress_ctx = &job;
	pthread_mutex_init(&job.lock, NULL);
	pthread_cond_init(&job.cond, NULL);
	pthread_t tid;
	if (pthread_create(&tid, NULL, job_main, &job) != 0) {
		ls_module *m;
		Py_BEGIN_ALLOW_THREADS
		m = ls_module_open(path, opt, err);
		Py_END_ALLOW_THREADS
		return m;
	}
	int interrupted = 0;
	for (;;) {
		int finished;
		size_t done, total;
		Py_BEGIN_ALLOW_THREADS
		pthread_mutex_lock(&job.lock);
		if (!job.finished) {
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += 100 * 1000 * 1000;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&job.cond, &job.lock, &until);
		}
		finished = job.finished;
		done = job.done;
		total = job.total;
		pthread_mutex_unlock(&job.lock);
		Py_END_ALLOW_THREADS
		if (finished)
			break;
		if (interrupted)
			continue; /* waiting for the analysis to notice */
		PyObject *r = PyObject_CallFunction(progress, "nn", (Py_ssize_t)done, (Py_ssize_t)total);
		Py_XDECREF(r);
		if (!r || PyErr_CheckSignals() < 0) {
			interrupted = 1;
			pthread_mutex_lock(&job.lock);
			job.stop = 1;
			pthread_mutex_unlock(&job.lock);
		}
	}
	pthread_join(tid, NULL);
	pthread_mutex_destroy(&job.lock);
	pthread_cond_destroy(&job.cond);
	if (interrupted) {
		if (job.m) /* finished before it saw the request */
			ls_module_close(job.m);
		if (!PyErr_Occurred())
			PyErr_SetNone(PyExc_KeyboardInterrupt);
		return NULL;
	}
	*err = job.err;
	return job.m;
}

/* ---- scope -> dict -------------------------------------------------------- */

/* Sets KEY in DICT to VALUE and drops the reference; 0 or -1 (exception). */
static int
set_item(PyObject *dict, const char *key, PyObject *value)
{
	if (!value)
		return -1;
	int rc = PyDict_SetItemString(dict, key, value);
	Py_DECREF(value);
	return rc;
}

static PyObject *
str_or_none(const char *s)
{
	if (!s)
		Py_RETURN_NONE;
	/* Names and paths are bytes, not necessarily UTF-8: surrogate escapes
	 * keep them (the Python side escapes them for display). */
	return PyUnicode_DecodeUTF8(s, strlen(s), "surrogateescape");
}

static PyObject *
edge_list(const ls_scope *loop, size_t n, ls_edge (*get)(const ls_scope *, size_t))
{
	PyObject *list = PyList_New((Py_ssize_t)n);
	if (!list)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		ls_edge e = get(loop, i);
		PyObject *t = Py_BuildValue("(KK)", (unsigned long long)e.from,
		                            (unsigned long long)e.to);
		if (!t) {
			Py_DECREF(list);
			return NULL;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, t);
	}
	return list;
}

static PyObject *
scope_dict(const ls_scope *s)
{
	ls_scope_kind kind = ls_scope_kind_of(s);
	PyObject *d = PyDict_New();
	if (!d)
		return NULL;
	if (set_item(d, "kind", PyUnicode_FromString(ls_scope_kind_name(kind))) < 0)
		goto fail;

	switch (kind) {
	case LS_SCOPE_PROC:
		if (set_item(d, "name", str_or_none(ls_scope_name(s))) < 0)
			goto fail;
		if (ls_scope_linkage_name(s) &&
		    set_item(d, "linkage_name", str_or_none(ls_scope_linkage_name(s))) < 0)
			goto fail;
		/* not 0: an indirect jump not resolved, so loops may be missing */
		if (set_item(d, "unresolved_jumps", PyLong_FromUnsignedLong(ls_proc_unresolved_jumps(s))) < 0)
			goto fail;
		break;
	case LS_SCOPE_INLINE:
		if (set_item(d, "name", str_or_none(ls_scope_name(s))) < 0 ||
		    set_item(d, "call_file", str_or_none(ls_scope_call_file(s))) < 0 ||
		    set_item(d, "call_line", PyLong_FromUnsignedLong(ls_scope_call_line(s))) < 0 ||
		    set_item(d, "call_column", PyLong_FromUnsignedLong(ls_scope_call_column(s))) < 0)
			goto fail;
		break;
	case LS_SCOPE_LOOP: {
		if (set_item(d, "header", PyLong_FromUnsignedLongLong(ls_loop_header(s))) < 0 ||
		    set_item(d, "depth", PyLong_FromUnsignedLong(ls_loop_depth(s))) < 0 ||
		    set_item(d, "irreducible", PyBool_FromLong(ls_loop_irreducible(s))) < 0)
			goto fail;
		size_t n = ls_loop_nentries(s);
		PyObject *entries = PyList_New((Py_ssize_t)n);
		if (!entries)
			goto fail;
		for (size_t i = 0; i < n; i++) {
			PyObject *a = PyLong_FromUnsignedLongLong(ls_loop_entry(s, i));
			if (!a) {
				Py_DECREF(entries);
				goto fail;
			}
			PyList_SET_ITEM(entries, (Py_ssize_t)i, a);
		}
		unsigned nparts, part = ls_loop_part(s, &nparts);
		if (set_item(d, "entries", entries) < 0 ||
		    set_item(d, "exits", edge_list(s, ls_loop_nexits(s), ls_loop_exit)) < 0 ||
		    set_item(d, "backedges", edge_list(s, ls_loop_nbackedges(s), ls_loop_backedge)) < 0 ||
		    set_item(d, "compiler_made", str_or_none(ls_loop_compiler_made(s))) < 0 ||
		    set_item(d, "line_guessed", str_or_none(ls_loop_line_guessed(s))) < 0 ||
		    set_item(d, "part", PyLong_FromUnsignedLong(part)) < 0 ||
		    set_item(d, "parts", PyLong_FromUnsignedLong(nparts)) < 0)
			goto fail;
		break;
	}
	default:
		break;
	}
	if (kind != LS_SCOPE_MODULE) {
		if (set_item(d, "file", str_or_none(ls_scope_file(s))) < 0 ||
		    set_item(d, "line", PyLong_FromUnsignedLong(ls_scope_line(s))) < 0)
			goto fail;
	}

	size_t nr = ls_scope_nranges(s);
	PyObject *ranges = PyList_New((Py_ssize_t)nr);
	if (!ranges)
		goto fail;
	for (size_t i = 0; i < nr; i++) {
		ls_range r = ls_scope_range(s, i);
		PyObject *t = Py_BuildValue("(KK)", (unsigned long long)r.lo,
		                            (unsigned long long)r.hi);
		if (!t) {
			Py_DECREF(ranges);
			goto fail;
		}
		PyList_SET_ITEM(ranges, (Py_ssize_t)i, t);
	}
	if (set_item(d, "ranges", ranges) < 0)
		goto fail;
	return d;
fail:
	Py_DECREF(d);
	return NULL;
}

/* The dict of S with "children": its subtree, statements only if WITH_STMTS.
 * Recursion depth is bounded by the scope tree's depth (inline nests are
 * capped at LS_MAX_CHAIN by the core), far below C stack limits. */
static PyObject *
scope_tree(const ls_scope *s, int with_stmts)
{
	PyObject *d = scope_dict(s);
	if (!d)
		return NULL;
	PyObject *children = PyList_New(0);
	if (!children)
		goto fail;
	for (const ls_scope *c = ls_scope_first_child(s); c; c = ls_scope_next_sibling(c)) {
		if (!with_stmts && ls_scope_kind_of(c) == LS_SCOPE_STMT)
			continue;
		PyObject *cd = scope_tree(c, with_stmts);
		if (!cd || PyList_Append(children, cd) < 0) {
			Py_XDECREF(cd);
			Py_DECREF(children);
			goto fail;
		}
		Py_DECREF(cd);
	}
	if (set_item(d, "children", children) < 0)
		goto fail;
	return d;
fail:
	Py_DECREF(d);
	return NULL;
}

/* ---- Module ---------------------------------------------------------------- */

static int
Module_init(ModuleObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"path", "cache", "loops", "jobs", "cache_dir",
	                         "debug_file_path", "progress", NULL};
	PyObject *path_obj = NULL, *progress = Py_None;
	int cache = 1, loops = 1, jobs = 0;
	const char *cache_dir = NULL, *debug_file_path = NULL;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O&|ppizzO", kwlist,
	                                 PyUnicode_FSConverter, &path_obj,
	                                 &cache, &loops, &jobs, &cache_dir,
	                                 &debug_file_path, &progress))
		return -1;
	if (progress != Py_None && !PyCallable_Check(progress)) {
		Py_DECREF(path_obj);
		PyErr_SetString(PyExc_TypeError, "progress must be callable or None");
		return -1;
	}
	if (self->m) { /* __init__ called twice: start afresh */
		ls_module_close(self->m);
		self->m = NULL;
	}

	ls_options opt;
	ls_options_init(&opt);
	opt.use_cache = cache;
	opt.want_loops = loops;
	opt.jobs = jobs;
	opt.progress = 0; /* GDB owns the terminal */
	opt.cache_dir = cache_dir;
	opt.debug_file_path = debug_file_path;
	/* as the loopscope command takes them: loopscope(1) */
	opt.read_sources = getenv("LOOPSCOPE_NO_SOURCE") == NULL;
	opt.source_path = getenv("LOOPSCOPE_SOURCE_PATH");
	struct warn_sink sink = {.messages = NULL};
	pthread_mutex_init(&sink.lock, NULL);
	opt.warn = warn_collect;
	opt.warn_ctx = &sink;

	ls_error err;
	memset(&err, 0, sizeof err);
	const char *path = PyBytes_AS_STRING(path_obj);
	ls_module *m;
	struct stat st;
	int interrupted = 0;
	if (stat(path, &st) < 0)
		memset(&st, 0, sizeof st);
	/* The analysis of a large library takes seconds: let GDB's other
	 * Python threads run meanwhile.  PATH stays alive: path_obj is held. */
	if (progress != Py_None) {
		m = open_with_progress(path, &opt, progress, &err);
		interrupted = !m && PyErr_Occurred();
	} else {
		Py_BEGIN_ALLOW_THREADS
		m = ls_module_open(path, &opt, &err);
		Py_END_ALLOW_THREADS
	}
	Py_DECREF(path_obj);
	pthread_mutex_destroy(&sink.lock);

	PyObject *warnings = PyList_New(0);
	for (size_t i = 0; i < sink.count; i++) {
		if (warnings) {
			PyObject *w = str_or_none(sink.messages[i]);
			if (!w || PyList_Append(warnings, w) < 0)
				Py_CLEAR(warnings);
			Py_XDECREF(w);
		}
		free(sink.messages[i]);
	}
	free(sink.messages);

	if (interrupted) {
		Py_XDECREF(warnings);
		return -1;
	}
	if (!m) {
		Py_XDECREF(warnings);
		PyObject *msg = str_or_none(err.message[0] ? err.message : "cannot open the module");
		if (msg) {
			PyObject *exc_args = Py_BuildValue("(Ni)", msg, (int)err.code);
			if (exc_args) {
				PyErr_SetObject(LsError, exc_args);
				Py_DECREF(exc_args);
			}
		}
		return -1;
	}
	if (!warnings) {
		ls_module_close(m);
		return -1;
	}
	self->m = m;
	self->st = st;
	Py_XSETREF(self->warnings, warnings);
	return 0;
}

static void
Module_dealloc(ModuleObject *self)
{
	if (self->m)
		ls_module_close(self->m);
	Py_XDECREF(self->warnings);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
check_open(ModuleObject *self)
{
	if (!self->m) {
		PyErr_SetString(LsError, "module is not open");
		return -1;
	}
	return 0;
}

static PyObject *
Module_lookup(ModuleObject *self, PyObject *arg)
{
	if (check_open(self) < 0)
		return NULL;
	unsigned long long addr = PyLong_AsUnsignedLongLong(arg);
	if (addr == (unsigned long long)-1 && PyErr_Occurred())
		return NULL;
	/* The chain is a few pointers; the stack holds it comfortably. */
	const ls_scope *chain[LS_MAX_CHAIN];
	size_t n = ls_lookup_chain(self->m, (uint64_t)addr, chain, LS_MAX_CHAIN);
	if (n > LS_MAX_CHAIN)
		n = LS_MAX_CHAIN;
	PyObject *list = PyList_New((Py_ssize_t)n);
	if (!list)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		PyObject *d = scope_dict(chain[i]);
		if (!d) {
			Py_DECREF(list);
			return NULL;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, d);
	}
	return list;
}

/* The lookup object of ADDR, as ls_write_chain_json writes it (design.md's
 * `lookup --json`), as a dict: the same fields, with the scopes as dicts
 * (scope_dict: their other fields too), plus "depth", the uncut length. */
static PyObject *
chain_object(ModuleObject *self, uint64_t addr)
{
	const ls_scope *chain[LS_MAX_CHAIN];
	size_t n = ls_lookup_chain(self->m, addr, chain, LS_MAX_CHAIN);
	if (n > LS_MAX_CHAIN)
		n = LS_MAX_CHAIN;
	size_t depth = n ? ls_lookup_depth(self->m, addr) : 0; /* past n: cut */
	PyObject *d = PyDict_New();
	PyObject *list = d ? PyList_New((Py_ssize_t)n) : NULL;
	if (!list)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		PyObject *sd = scope_dict(chain[i]);
		if (!sd) {
			Py_DECREF(list);
			goto fail;
		}
		PyList_SET_ITEM(list, (Py_ssize_t)i, sd);
	}
	PyObject *error = Py_None;
	Py_INCREF(error);
	if (n == 0) { /* the writer's words */
		Py_DECREF(error);
		error = PyUnicode_FromFormat("no procedure contains 0x%llx", (unsigned long long)addr);
	}
	if (set_item(d, "addr", PyLong_FromUnsignedLongLong(addr)) < 0 ||
	    set_item(d, "module", str_or_none(ls_module_path(self->m))) < 0 ||
	    set_item(d, "chain", list) < 0 ||
	    set_item(d, "cut", PyLong_FromSize_t(depth > n ? depth - n : 0)) < 0 ||
	    set_item(d, "depth", PyLong_FromSize_t(depth)) < 0 ||
	    set_item(d, "error", error) < 0)
		goto fail;
	return d;
fail:
	Py_XDECREF(d);
	return NULL;
}

static PyObject *
Module_chain(ModuleObject *self, PyObject *arg)
{
	if (check_open(self) < 0)
		return NULL;
	unsigned long long addr = PyLong_AsUnsignedLongLong(arg);
	if (addr == (unsigned long long)-1 && PyErr_Occurred())
		return NULL;
	return chain_object(self, (uint64_t)addr);
}

/* Many addresses in one call: a backtrace asks for every frame at once. */
static PyObject *
Module_chains(ModuleObject *self, PyObject *arg)
{
	if (check_open(self) < 0)
		return NULL;
	PyObject *seq = PySequence_Fast(arg, "chains() takes a sequence of addresses");
	if (!seq)
		return NULL;
	Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
	PyObject *out = PyList_New(n);
	for (Py_ssize_t i = 0; out && i < n; i++) {
		unsigned long long addr = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(seq, i));
		PyObject *c = addr == (unsigned long long)-1 && PyErr_Occurred() ? NULL
		              : chain_object(self, (uint64_t)addr);
		if (!c)
			Py_CLEAR(out);
		else
			PyList_SET_ITEM(out, i, c);
	}
	Py_DECREF(seq);
	return out;
}

/* Whether the analyzed file is not the one on disk any more (replaced,
 * truncated, rewritten): what the core keeps mapped of it may be gone, and
 * a read through the old mapping of a truncated file is a SIGBUS that
 * kills GDB.  The scope tree itself is in memory and stays good. */
static int
file_changed(const ModuleObject *self)
{
	struct stat now;
	const char *path = ls_module_path(self->m);
	if (!path || stat(path, &now) < 0)
		return 1;
	return now.st_dev != self->st.st_dev || now.st_ino != self->st.st_ino || now.st_size != self->st.st_size ||
	       now.st_mtim.tv_sec != self->st.st_mtim.tv_sec || now.st_mtim.tv_nsec != self->st.st_mtim.tv_nsec;
}

static PyObject *
Module_get_changed(ModuleObject *self, void *closure)
{
	return check_open(self) < 0 ? NULL : PyBool_FromLong(file_changed(self));
}

static PyObject *
Module_depth(ModuleObject *self, PyObject *arg)
{
	if (check_open(self) < 0)
		return NULL;
	unsigned long long addr = PyLong_AsUnsignedLongLong(arg);
	if (addr == (unsigned long long)-1 && PyErr_Occurred())
		return NULL;
	return PyLong_FromSize_t(ls_lookup_depth(self->m, (uint64_t)addr));
}

static PyObject *
Module_symbol(ModuleObject *self, PyObject *args)
{
	const char *name;
	if (check_open(self) < 0 || !PyArg_ParseTuple(args, "s", &name))
		return NULL;
	/* Symbols are read from the file's mapping: never from a changed one. */
	if (file_changed(self)) {
		PyErr_Format(LsError, "%s changed on disk since it was analyzed", ls_module_path(self->m));
		return NULL;
	}
	uint64_t addr = 0, size = 0;
	if (ls_module_symbol(self->m, name, &addr, &size) < 0)
		Py_RETURN_NONE;
	return Py_BuildValue("(KK)", (unsigned long long)addr, (unsigned long long)size);
}

/* One access as a dict: loopscope lookup --data --json's fields. */
static PyObject *
access_dict(const ls_access *a)
{
	PyObject *d = PyDict_New();
	if (!d)
		return NULL;
	int named = a->rule != LS_RULE_NONE && a->variable;
	if (set_item(d, "addr", PyLong_FromUnsignedLongLong(a->addr)) < 0 ||
	    set_item(d, "operand", str_or_none(a->operand)) < 0 ||
	    set_item(d, "kind", PyUnicode_FromString(ls_access_kind_name(a->kind))) < 0 ||
	    set_item(d, "width", PyLong_FromUnsignedLong(a->width)) < 0 ||
	    set_item(d, "indexed", PyBool_FromLong(a->indexed)) < 0 ||
	    set_item(d, "rule", PyUnicode_FromString(ls_access_rule_name(a->rule))) < 0 ||
	    set_item(d, "variable", str_or_none(named ? a->variable : NULL)) < 0 ||
	    set_item(d, "type", str_or_none(named ? a->type : NULL)) < 0 ||
	    set_item(d, "offset", named ? PyLong_FromLongLong(a->offset) : (Py_INCREF(Py_None), Py_None)) < 0 ||
	    set_item(d, "field", str_or_none(named ? a->field : NULL)) < 0 ||
	    set_item(d, "field_type", str_or_none(named ? a->field_type : NULL)) < 0 ||
	    set_item(d, "bitfield", PyBool_FromLong(named && a->bitfield)) < 0 ||
	    set_item(d, "expr", str_or_none(named ? a->expr : NULL)) < 0) {
		Py_DECREF(d);
		return NULL;
	}
	return d;
}

/* accesses(addr) -> the accesses of the instruction at ADDR (the accesses
 * stage, design.md's "Accesses"): a list of dicts, [] when it has none;
 * before=True: when it has none, the last access before it in its basic
 * block (where a stop after a memory instruction, or a timer sample,
 * points), with "before": True. */
static PyObject *
Module_accesses(ModuleObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "addr", "before", NULL };
	unsigned long long addr;
	int before = 0;
	if (check_open(self) < 0 || !PyArg_ParseTupleAndKeywords(args, kw, "K|p", names, &addr, &before))
		return NULL;
	ls_error err;
	ls_accesses *acc;
	Py_BEGIN_ALLOW_THREADS
	acc = ls_accesses_of(self->m, (uint64_t)addr, &err);
	Py_END_ALLOW_THREADS
	if (!acc) {
		if (err.code == LS_ERR_NOT_FOUND)
			return PyList_New(0);
		PyErr_SetString(LsError, err.message);
		return NULL;
	}
	size_t first = 0, n = ls_accesses_at(acc, (uint64_t)addr, &first);
	const ls_access *prev = !n && before ? ls_accesses_before(acc, (uint64_t)addr) : NULL;
	PyObject *list = PyList_New(0);
	for (size_t i = 0; list && i < (prev ? 1 : n); i++) {
		PyObject *d = access_dict(prev ? prev : ls_accesses_get(acc, first + i));
		if (!d || (prev && set_item(d, "before", PyBool_FromLong(1)) < 0) || PyList_Append(list, d) < 0)
			Py_CLEAR(list);
		Py_XDECREF(d);
	}
	ls_accesses_free(acc);
	return list;
}

static PyObject *
Module_section(ModuleObject *self, PyObject *args)
{
	const char *name;
	if (check_open(self) < 0 || !PyArg_ParseTuple(args, "s", &name))
		return NULL;
	uint64_t addr = 0, size = 0;
	if (ls_module_section(self->m, name, &addr, &size) < 0)
		Py_RETURN_NONE;
	return Py_BuildValue("(KK)", (unsigned long long)addr, (unsigned long long)size);
}

/* kernel_layout() -> [(name, offset from the module's base, size, address
 * in the analysis), ...]: where the kernel's module loader puts a .ko's
 * core code sections (ls_module_kernel_layout); [] for other files. */
static PyObject *
Module_kernel_layout(ModuleObject *self, PyObject *unused)
{
	(void)unused;
	if (check_open(self) < 0)
		return NULL;
	size_t n = ls_module_kernel_layout(self->m, NULL, 0);
	ls_ksection *secs = PyMem_Calloc(n ? n : 1, sizeof *secs);
	if (!secs)
		return PyErr_NoMemory();
	size_t got = ls_module_kernel_layout(self->m, secs, n);
	PyObject *list = PyList_New(0);
	for (size_t i = 0; list && i < got && i < n; i++) {
		PyObject *t = Py_BuildValue("(NKKK)", str_or_none(secs[i].name), (unsigned long long)secs[i].offset,
		                            (unsigned long long)secs[i].size, (unsigned long long)secs[i].addr);
		if (!t || PyList_Append(list, t) < 0)
			Py_CLEAR(list);
		Py_XDECREF(t);
	}
	PyMem_Free(secs);
	return list;
}

static PyObject *
Module_get_relocatable(ModuleObject *self, void *closure)
{
	(void)closure;
	if (check_open(self) < 0)
		return NULL;
	return PyBool_FromLong(ls_module_is_relocatable(self->m));
}

static PyObject *
Module_proc_at(ModuleObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = {"addr", "stmts", NULL};
	unsigned long long addr;
	int stmts = 0;
	if (check_open(self) < 0 ||
	    !PyArg_ParseTupleAndKeywords(args, kwds, "K|p", kwlist, &addr, &stmts))
		return NULL;
	const ls_scope *proc = ls_lookup_proc(self->m, (uint64_t)addr);
	if (!proc)
		Py_RETURN_NONE;
	return scope_tree(proc, stmts);
}

/* Every procedure, found under the module root whatever the file scopes. */
static int
collect_procs(const ls_scope *s, PyObject *list)
{
	for (const ls_scope *c = ls_scope_first_child(s); c; c = ls_scope_next_sibling(c)) {
		ls_scope_kind k = ls_scope_kind_of(c);
		if (k == LS_SCOPE_PROC) {
			PyObject *d = scope_dict(c);
			if (!d || PyList_Append(list, d) < 0) {
				Py_XDECREF(d);
				return -1;
			}
			Py_DECREF(d);
		} else if (k == LS_SCOPE_MODULE || k == LS_SCOPE_FILE) {
			if (collect_procs(c, list) < 0)
				return -1;
		}
	}
	return 0;
}

static PyObject *
Module_procs(ModuleObject *self, PyObject *unused)
{
	if (check_open(self) < 0)
		return NULL;
	PyObject *list = PyList_New(0);
	if (!list)
		return NULL;
	const ls_scope *root = ls_module_root(self->m);
	if (root && collect_procs(root, list) < 0) {
		Py_DECREF(list);
		return NULL;
	}
	return list;
}

static PyObject *
Module_get_path(ModuleObject *self, void *closure)
{
	return check_open(self) < 0 ? NULL : str_or_none(ls_module_path(self->m));
}

static PyObject *
Module_get_debug_path(ModuleObject *self, void *closure)
{
	return check_open(self) < 0 ? NULL : str_or_none(ls_module_debug_path(self->m));
}

static PyObject *
Module_get_build_id(ModuleObject *self, void *closure)
{
	return check_open(self) < 0 ? NULL : str_or_none(ls_module_build_id(self->m));
}

static PyObject *
Module_get_has_dwarf(ModuleObject *self, void *closure)
{
	return check_open(self) < 0 ? NULL : PyBool_FromLong(ls_module_has_dwarf(self->m));
}

static PyObject *
Module_get_from_cache(ModuleObject *self, void *closure)
{
	return check_open(self) < 0 ? NULL : PyBool_FromLong(ls_module_from_cache(self->m));
}

static PyObject *
Module_get_warnings(ModuleObject *self, void *closure)
{
	if (!self->warnings)
		return PyList_New(0);
	Py_INCREF(self->warnings);
	return self->warnings;
}

/* Whether scope name FULL names function NAME: equal, or equal without
 * the parameter list ("do_work(int)"), or its last qualified part
 * ("ns::cls<T>::f(int) const" for "f" or "cls<T>::f"). */
static int
name_matches(const char *full, const char *name)
{
	if (!full)
		return 0;
	size_t n = strlen(name), depth = 0;
	const char *end = full + strlen(full);
	for (const char *p = full; *p; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>' && depth)
			depth--;
		else if (*p == '(' && depth == 0 && p > full && strncmp(p, "(anonymous", 10) != 0) {
			end = p;
			break;
		}
	}
	size_t len = (size_t)(end - full);
	if (strcmp(full, name) == 0 || (len == n && strncmp(full, name, n) == 0))
		return 1;
	return len > n + 2 && strncmp(end - n, name, n) == 0 && end[-n - 1] == ':' && end[-n - 2] == ':';
}

/* Appends (proc dict, inline subtree) for every inline scope below S
 * named NAME; PROC is the procedure S belongs to. */
static int
collect_inlined(const ls_scope *s, const ls_scope *proc, const char *name, PyObject *list)
{
	for (const ls_scope *c = ls_scope_first_child(s); c; c = ls_scope_next_sibling(c)) {
		ls_scope_kind k = ls_scope_kind_of(c);
		if (k == LS_SCOPE_STMT)
			continue;
		const ls_scope *p = k == LS_SCOPE_PROC ? c : proc;
		if (k == LS_SCOPE_INLINE && name_matches(ls_scope_name(c), name)) {
			PyObject *pd = scope_dict(proc);
			PyObject *id = pd ? scope_tree(c, 0) : NULL;
			PyObject *t = id ? PyTuple_Pack(2, pd, id) : NULL;
			Py_XDECREF(pd);
			Py_XDECREF(id);
			if (!t || PyList_Append(list, t) < 0) {
				Py_XDECREF(t);
				return -1;
			}
			Py_DECREF(t);
		}
		if (collect_inlined(c, p, name, list) < 0)
			return -1;
	}
	return 0;
}

static PyObject *
Module_inlined(ModuleObject *self, PyObject *args)
{
	const char *name;
	if (check_open(self) < 0 || !PyArg_ParseTuple(args, "s", &name))
		return NULL;
	PyObject *list = PyList_New(0);
	if (!list)
		return NULL;
	const ls_scope *root = ls_module_root(self->m);
	if (root && collect_inlined(root, NULL, name, list) < 0) {
		Py_DECREF(list);
		return NULL;
	}
	return list;
}

/* Whether scope file FULL is the file the user named: the same path, or
 * FULL ends with "/NAME" (GDB's FILE:LINE matches a trailing part). */
static int
file_matches(const char *full, const char *name)
{
	if (!name)
		return 1;
	if (!full)
		return 0;
	size_t nf = strlen(full), nn = strlen(name);
	if (nf == nn)
		return strcmp(full, name) == 0;
	return nf > nn && full[nf - nn - 1] == '/' && strcmp(full + nf - nn, name) == 0;
}

/* Appends (proc dict, loop dict) for every loop below S whose line is LINE
 * in a file matching FILE; PROC is the procedure S belongs to. */
static int
collect_loops_at(const ls_scope *s, const ls_scope *proc, unsigned line, const char *file, PyObject *list)
{
	for (const ls_scope *c = ls_scope_first_child(s); c; c = ls_scope_next_sibling(c)) {
		ls_scope_kind k = ls_scope_kind_of(c);
		if (k == LS_SCOPE_STMT)
			continue;
		const ls_scope *p = k == LS_SCOPE_PROC ? c : proc;
		if (k == LS_SCOPE_LOOP && p && ls_scope_line(c) == line && file_matches(ls_scope_file(c), file)) {
			PyObject *pd = scope_dict(p);
			PyObject *ld = pd ? scope_dict(c) : NULL;
			PyObject *t = ld ? PyTuple_Pack(2, pd, ld) : NULL;
			Py_XDECREF(pd);
			Py_XDECREF(ld);
			if (!t || PyList_Append(list, t) < 0) {
				Py_XDECREF(t);
				return -1;
			}
			Py_DECREF(t);
		}
		if (collect_loops_at(c, p, line, file, list) < 0)
			return -1;
	}
	return 0;
}

static PyObject *
Module_loops_at(ModuleObject *self, PyObject *args)
{
	unsigned int line;
	PyObject *file_obj = Py_None, *file_bytes = NULL;
	if (check_open(self) < 0 || !PyArg_ParseTuple(args, "I|O", &line, &file_obj))
		return NULL;
	if (file_obj != Py_None && !PyUnicode_FSConverter(file_obj, &file_bytes))
		return NULL;
	PyObject *list = PyList_New(0);
	const ls_scope *root = ls_module_root(self->m);
	if (list && root &&
	    collect_loops_at(root, NULL, line, file_bytes ? PyBytes_AS_STRING(file_bytes) : NULL, list) < 0)
		Py_CLEAR(list);
	Py_XDECREF(file_bytes);
	return list;
}

static PyMethodDef Module_methods[] = {
	{"lookup", (PyCFunction)Module_lookup, METH_O,
	 "lookup(addr) -> list of scope dicts, procedure first, statement last; [] outside any procedure"},
	{"chain", (PyCFunction)Module_chain, METH_O,
	 "chain(addr) -> the lookup object (addr, module, chain, cut, depth, error) of addr"},
	{"chains", (PyCFunction)Module_chains, METH_O,
	 "chains([addr, ...]) -> [chain(addr), ...]"},
	{"depth", (PyCFunction)Module_depth, METH_O,
	 "depth(addr) -> the full length of addr's chain (lookup() keeps at most LS_MAX_CHAIN: procedure, outermost scopes, statement)"},
	{"symbol", (PyCFunction)Module_symbol, METH_VARARGS,
	 "symbol(name) -> (addr, size) of a symbol (mangled, demangled or NAME@plt), or None"},
	{"accesses", (PyCFunction)(void (*)(void))Module_accesses, METH_VARARGS | METH_KEYWORDS,
	 "accesses(addr, before=False) -> [dict per memory operand of the instruction at addr]: operand, kind, width, "
	 "rule, variable, type, offset, field, field_type, bitfield, expr (None without a variable); before=True: "
	 "when it has none, the last access before it in its block, marked 'before'"},
	{"section", (PyCFunction)Module_section, METH_VARARGS,
	 "section(name) -> (addr, size) of an allocated section in the analysis' addresses (.ko: .text at 0), or None"},
	{"kernel_layout", (PyCFunction)Module_kernel_layout, METH_NOARGS,
	 "kernel_layout() -> [(name, offset, size, addr)]: a .ko's code sections as the kernel's module loader lays them out from the module's base (offset), and their addresses in the analysis; [] for other files"},
	{"proc_at", (PyCFunction)(void (*)(void))Module_proc_at, METH_VARARGS | METH_KEYWORDS,
	 "proc_at(addr, stmts=False) -> the procedure containing addr with its subtree in 'children', or None"},
	{"procs", (PyCFunction)Module_procs, METH_NOARGS,
	 "procs() -> list of every procedure's scope dict"},
	{"loops_at", (PyCFunction)Module_loops_at, METH_VARARGS,
	 "loops_at(line, file=None) -> [(proc dict, loop dict), ...] of every loop whose line is LINE "
	 "(in FILE: a path, or its last components): every copy of an inlined loop"},
	{"inlined", (PyCFunction)Module_inlined, METH_VARARGS,
	 "inlined(name) -> [(proc dict, inline scope dict with 'children'), ...] for every inlined call of name"},
	{0},
};

static PyGetSetDef Module_getset[] = {
	{"path", (getter)Module_get_path, NULL, "absolute path of the analyzed file", NULL},
	{"debug_path", (getter)Module_get_debug_path, NULL, "where the DWARF came from, or None", NULL},
	{"build_id", (getter)Module_get_build_id, NULL, "build-id in hex, or None", NULL},
	{"has_dwarf", (getter)Module_get_has_dwarf, NULL, "True if debug information was found", NULL},
	{"from_cache", (getter)Module_get_from_cache, NULL, "True if the structure came from the cache", NULL},
	{"warnings", (getter)Module_get_warnings, NULL, "what the analysis reported as not analyzed", NULL},
	{"relocatable", (getter)Module_get_relocatable, NULL, "True for a .o or .ko (ET_REL)", NULL},
	{"changed", (getter)Module_get_changed, NULL, "True if the file on disk is not the one analyzed", NULL},
	{0},
};

static PyTypeObject ModuleType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "_loopscope.Module",
	.tp_doc = "Module(path, cache=True, loops=True, jobs=0, cache_dir=None, debug_file_path=None, progress=None): "
	          "the analyzed structure of one ELF file",
	.tp_basicsize = sizeof(ModuleObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_new = PyType_GenericNew,
	.tp_init = (initproc)Module_init,
	.tp_dealloc = (destructor)Module_dealloc,
	.tp_methods = Module_methods,
	.tp_getset = Module_getset,
};

/* sections(path) -> {name: link-time address} of the allocated sections of
 * an ELF file, the first of each name, read without analysis (ls_file): what
 * maps GDB's runtime section addresses back to the file's. */
static PyObject *
loopscope_sections(PyObject *self, PyObject *args)
{
	/* The path as the file system's bytes (a str with surrogate escapes
	 * for a name that is not UTF-8, as the GDB script keeps them). */
	PyObject *path_obj = NULL;
	if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path_obj))
		return NULL;
	const char *path = PyBytes_AS_STRING(path_obj);
	ls_error err;
	ls_file *f;
	Py_BEGIN_ALLOW_THREADS
	f = ls_file_open(path, &err);
	Py_END_ALLOW_THREADS
	Py_DECREF(path_obj);
	if (!f) {
		PyErr_SetObject(LsError, str_or_none(err.message));
		return NULL;
	}
	PyObject *d = PyDict_New();
	for (size_t i = 0; d && i < ls_file_nsections(f); i++) {
		const ls_section *sec = ls_file_section(f, i);
		if (!(sec->flags & LS_SECTION_ALLOC) || PyDict_GetItemString(d, sec->name))
			continue;
		PyObject *addr = PyLong_FromUnsignedLongLong(sec->addr);
		if (!addr || PyDict_SetItemString(d, sec->name, addr) < 0) {
			Py_XDECREF(addr);
			Py_CLEAR(d);
			break;
		}
		Py_DECREF(addr);
	}
	ls_file_close(f);
	return d;
}

/* build_id(path) -> the build-id of an ELF file in hex, or None: what tells
 * whether a file reached another way (through /proc/PID/root, a remote
 * copy) is the one GDB loaded. */
static PyObject *
loopscope_build_id(PyObject *self, PyObject *args)
{
	PyObject *path_obj = NULL;
	if (!PyArg_ParseTuple(args, "O&", PyUnicode_FSConverter, &path_obj))
		return NULL;
	ls_error err;
	ls_file *f;
	Py_BEGIN_ALLOW_THREADS
	f = ls_file_open(PyBytes_AS_STRING(path_obj), &err);
	Py_END_ALLOW_THREADS
	Py_DECREF(path_obj);
	if (!f) {
		PyErr_SetObject(LsError, str_or_none(err.message));
		return NULL;
	}
	const uint8_t *bits;
	size_t n = ls_file_build_id(f, &bits);
	PyObject *hex = NULL;
	if (n == 0) {
		Py_INCREF(Py_None);
		hex = Py_None;
	} else {
		char buf[2 * 64 + 1];
		static const char digits[] = "0123456789abcdef";
		if (n > 64)
			n = 64;
		for (size_t i = 0; i < n; i++) {
			buf[2 * i] = digits[bits[i] >> 4];
			buf[2 * i + 1] = digits[bits[i] & 15];
		}
		hex = PyUnicode_FromStringAndSize(buf, (Py_ssize_t)(2 * n));
	}
	ls_file_close(f);
	return hex;
}

static PyMethodDef loopscope_functions[] = {
	{"sections", loopscope_sections, METH_VARARGS,
	 "sections(path) -> {name: address} of the allocated sections of an ELF file (no analysis)"},
	{"build_id", loopscope_build_id, METH_VARARGS,
	 "build_id(path) -> the build-id of an ELF file in hex, or None (no analysis)"},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef loopscope_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "_loopscope",
	.m_doc = "libloopscope for Python: program structure (procedures, inlined calls, loops, statements) of ELF files",
	.m_size = -1,
	.m_methods = loopscope_functions,
};

PyMODINIT_FUNC
PyInit__loopscope(void)
{
	if (PyType_Ready(&ModuleType) < 0)
		return NULL;
	PyObject *mod = PyModule_Create(&loopscope_module);
	if (!mod)
		return NULL;
	LsError = PyErr_NewException("_loopscope.Error", PyExc_RuntimeError, NULL);
	Py_INCREF(&ModuleType);
	if (!LsError ||
	    PyModule_AddObject(mod, "Error", LsError) < 0 ||
	    PyModule_AddObject(mod, "Module", (PyObject *)&ModuleType) < 0 ||
	    PyModule_AddStringConstant(mod, "version", LS_VERSION) < 0) {
		Py_DECREF(mod);
		return NULL;
	}
	Py_INCREF(LsError); /* one reference for the module, one for us */
	return mod;
}
