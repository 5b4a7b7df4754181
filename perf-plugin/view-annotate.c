/* view-annotate.c - `perf loops annotate --stdio`: the rows of annotate.c
 * as text, under a header naming the procedure, its binary and events.
 *
 *   Percent  Samples  Line Loops: Source     (a Percent/Samples pair per event)
 *
 * Percentages are of all the samples of the event, as in perf loops
 * report, so that a line's figure is the one --stdio -s srcline gives.
 * Names, paths and the source text are escaped (support/text_escape.h):
 * the source's tabs stay, no other control character reaches the terminal. */
#include "report.h"
#include "support/text_escape.h"

#include <string.h>

void pl_ann_cell(char *buf, size_t len, uint64_t s, uint64_t p, uint64_t base)
{
	snprintf(buf, len, "%8.2f%% %8llu", base ? 100.0 * (double)p / (double)base : 0.0, (unsigned long long)s);
}

void pl_ann_call_text(const pl_report *rep, const pl_ann_row *r, char *buf, size_t len)
{
	buf[0] = 0;
	if (!r->calls)
		return;
	size_t used = (size_t)snprintf(buf, len, "    [I] %s: Total", r->calls);
	for (size_t i = 0; i < rep->nshown && used < len; i++) {
		uint64_t all = rep->ev_period[rep->shown[i]];
		used += (size_t)snprintf(buf + used, len - used, "%s %.2f%% (%llu)", i ? "," : "",
					 all ? 100.0 * (double)r->call_period[i] / (double)all : 0.0,
					 (unsigned long long)r->call_samples[i]);
	}
}

static void print_cells(pl_report *rep, const pl_ann_row *r)
{
	for (size_t i = 0; i < rep->nshown; i++) {
		char cell[64];
		if (r->has_cost)
			pl_ann_cell(cell, sizeof cell, r->samples[i], r->period[i], rep->ev_period[rep->shown[i]]);
		else
			snprintf(cell, sizeof cell, "%18s", "");
		fputs(cell, rep->out);
	}
}

void pl_print_annotation(pl_report *rep, const pl_ann *ann)
{
	FILE *out = rep->out;
	char shortened[1024];
	const char *name = rep->opt->full_names ? ann->name : pl_short_name(ann->name, shortened, sizeof shortened);
	fputs("# perf loops annotate: ", out);
	ls_text_fputs(name, out);
	if (ann->inlined)
		fputs(" (inlined only: its instances together)", out);
	fputs("  (", out);
	ls_text_fputs(ann->binary, out);
	fputs(")\n", out);
	for (size_t i = 0; i < rep->nshown; i++) {
		size_t e = rep->shown[i];
		uint64_t all = rep->ev_period[e];
		fprintf(out, "# event '%s': %llu samples, the %s's own %.2f%% (%llu)\n", pd_attr_at(rep->r, e)->name,
			(unsigned long long)rep->ev_samples[e], ann->inlined ? "function" : "procedure", all ? 100.0 * (double)ann->period[i] / (double)all : 0.0,
			(unsigned long long)ann->samples[i]);
	}
	fprintf(out, "# Percent (of all samples of the event) and Samples per event; loops: Total in the columns"
		     " (with nested loops and callees), own in the text%s\n#\n",
		ann->with_asm ? "; an instruction's columns: its own samples" : "; an inlined call: its Total after the line");
	for (size_t i = 0; i < rep->nshown; i++)
		fprintf(out, "%s%17s", i ? " " : "#", pd_attr_at(rep->r, rep->shown[i])->name);
	fputc('\n', out);
	char text[8192];
	for (size_t i = 0; i < ann->n; i++) {
		const pl_ann_row *r = &ann->rows[i];
		ls_text_escape(r->text, text, sizeof text, r->kind == PL_ANN_SRC ? LS_ESC_KEEP_TAB : 0);
		if (r->kind == PL_ANN_FILE) {
			fprintf(out, "\n## %s\n", text);
			continue;
		}
		print_cells(rep, r);
		/* "  LINE MARGIN: text": the margin (loop brackets) ends at the colon */
		const char *margin = r->margin ? r->margin : "";
		if (r->kind == PL_ANN_LOOP)
			fprintf(out, "        %s-- %s\n", margin, text);
		else if (r->kind == PL_ANN_SRC) {
			char call[1024];
			pl_ann_call_text(rep, r, call, sizeof call); /* an inlined call's Total beside the line's Self */
			fprintf(out, "  %5u %s: %s%s\n", r->line, margin, text, call);
		}
		else
			fprintf(out, "        %s: %s\n", margin, text);
	}
}
