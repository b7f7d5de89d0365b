/* dagger-trace svg: a Gantt picture. A row per worker of each rank (tasks
 * coloured by codelet) and a row per rank for its transfers, drawn as lines
 * from the sender's row (send start) to the receiver's (delivery).
 * Readable with 10^4 tasks and more: boxes thinner than a pixel are summed
 * per pixel column and drawn as one column in the colour of the codelet
 * that used most of it, as opaque as the column was busy; transfers that
 * start and end in the same pixel columns between the same ranks are one
 * line, thicker with their number. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

#define LEFT 170
#define TOP 50
#define ROW_H 18
#define XFER_H 16
#define RANK_GAP 10
#define MAX_TITLED 20000 /* boxes with a tooltip; beyond that, plain boxes */

typedef struct svg {
    const tr_trace_t *tr;
    FILE *f;
    int width;
    int64_t t0, t1;
    double px_per_ns;
    int *rank_y;            /* y of each rank's first worker row */
    uint64_t titled;
} svg_t;

static double xpos(const svg_t *s, int64_t t)
{
    return LEFT + (double)(t - s->t0) * s->px_per_ns;
}

static int xfer_y(const svg_t *s, int r)
{
    return s->rank_y[r] + (int)s->tr->ranks[r].hdr.nworkers * ROW_H + XFER_H / 2;
}

static void layout(svg_t *s, int *height)
{
    const tr_trace_t *tr = s->tr;
    s->t0 = tr->t_begin;
    s->t1 = tr->t_end > tr->t_begin ? tr->t_end : tr->t_begin + 1;
    for (uint64_t i = 1; i < tr->ntasks; i++)
        if (tr->tasks[i].ran) {
            s->t0 = tr->tasks[i].t0 < s->t0 ? tr->tasks[i].t0 : s->t0;
            s->t1 = tr->tasks[i].t1 > s->t1 ? tr->tasks[i].t1 : s->t1;
        }
    s->px_per_ns = (double)s->width / (double)(s->t1 - s->t0);
    s->rank_y = tr_alloc((size_t)tr->nranks * sizeof(int));
    int y = TOP;
    for (int r = 0; r < tr->nranks; r++) {
        s->rank_y[r] = y;
        y += (int)tr->ranks[r].hdr.nworkers * ROW_H + XFER_H + RANK_GAP;
    }
    *height = y + 40 + 20 * (int)((tr->codelets.n + 5) / 6);
}

static void axis(svg_t *s, int height)
{
    double span = (double)(s->t1 - s->t0), step = pow(10, floor(log10(span / 8)));
    if (span / step > 40)
        step *= 5;
    else if (span / step > 16)
        step *= 2;
    for (double t = 0; t <= span; t += step) {
        double x = xpos(s, s->t0 + (int64_t)t);
        char lab[32];
        fprintf(s->f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"grid\"/>\n", x,
                TOP - 6, x, height - 50 - 20 * (int)((s->tr->codelets.n + 5) / 6));
        fprintf(s->f, "<text x=\"%.1f\" y=\"%d\" class=\"tick\">%s</text>\n", x, TOP - 10,
                tr_fmt_time(lab, t));
    }
}

static void labels(svg_t *s)
{
    const tr_trace_t *tr = s->tr;
    for (int r = 0; r < tr->nranks; r++) {
        for (uint32_t w = 0; w < tr->ranks[r].hdr.nworkers; w++)
            fprintf(s->f, "<text x=\"4\" y=\"%d\" class=\"row\">rank %d worker %u</text>\n",
                    s->rank_y[r] + (int)w * ROW_H + ROW_H - 5, r, w);
        fprintf(s->f, "<text x=\"4\" y=\"%d\" class=\"row\">rank %d transfers</text>\n",
                xfer_y(s, r) + 4, r);
        fprintf(s->f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"lane\"/>\n", LEFT,
                xfer_y(s, r), LEFT + s->width, xfer_y(s, r));
    }
}

/* ------------------------------------------------------------ task rows */

typedef struct row_bins {
    double *busy;           /* [column][codelet]: pixels of task time */
    size_t ncl;
} row_bins_t;

static void draw_box(svg_t *s, const tr_task_t *t, double x0, double x1, int y)
{
    char col[8], a[32];
    fprintf(s->f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"", x0, y + 1,
            x1 - x0, ROW_H - 2, tr_color(col, tr_codelet_index(s->tr, t->codelet)));
    if (s->titled++ < MAX_TITLED) {
        fputs("><title>", s->f);
        tr_put_xml(s->f, tr_codelet_name(s->tr, t->codelet));
        fprintf(s->f, " task %" PRIu64 ": %s</title></rect>\n", t->id,
                tr_fmt_time(a, (double)(t->t1 - t->t0)));
    } else {
        fputs("/>\n", s->f);
    }
}

/* Columns of summed thin boxes, merged while colour and shade stay the same. */
static void draw_bins(svg_t *s, row_bins_t *b, int y)
{
    int start = -1, cur_cl = -1, cur_q = 0;
    for (int c = 0; c <= s->width; c++) {
        int cl = -1, q = 0;
        if (c < s->width) {
            double sum = 0, best = 0;
            for (size_t k = 0; k < b->ncl; k++) {
                double v = b->busy[(size_t)c * b->ncl + k];
                sum += v;
                if (v > best) {
                    best = v;
                    cl = (int)k;
                }
            }
            q = (int)ceil((sum > 1 ? 1 : sum) * 4); /* opacity in quarters */
            if (!q)
                cl = -1;
        }
        if (cl == cur_cl && q == cur_q)
            continue;
        if (cur_cl >= 0) {
            char col[8];
            fprintf(s->f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" "
                    "fill-opacity=\"%.2f\"/>\n", LEFT + start, y + 1, c - start, ROW_H - 2,
                    tr_color(col, (uint32_t)cur_cl), cur_q / 4.0);
        }
        start = c;
        cur_cl = cl;
        cur_q = q;
    }
}

static void task_rows(svg_t *s)
{
    const tr_trace_t *tr = s->tr;
    row_bins_t b = {NULL, tr->codelets.n + 1};
    b.busy = tr_alloc((size_t)(s->width + 1) * b.ncl * sizeof(double));
    for (int r = 0; r < tr->nranks; r++)
        for (uint32_t w = 0; w < tr->ranks[r].hdr.nworkers; w++) {
            int y = s->rank_y[r] + (int)w * ROW_H;
            memset(b.busy, 0, (size_t)(s->width + 1) * b.ncl * sizeof(double));
            for (uint64_t i = 1; i < tr->ntasks; i++) {
                const tr_task_t *t = &tr->tasks[i];
                if (!t->ran || t->rank != r || t->worker != (int32_t)w)
                    continue;
                double x0 = xpos(s, t->t0), x1 = xpos(s, t->t1);
                if (x1 - x0 >= 1.0) {
                    draw_box(s, t, x0, x1, y);
                    continue;
                }
                int c = (int)((x0 + x1) / 2 - LEFT);
                c = c < 0 ? 0 : c >= s->width ? s->width - 1 : c;
                b.busy[(size_t)c * b.ncl + tr_codelet_index(tr, t->codelet)] += x1 - x0;
            }
            draw_bins(s, &b, y);
        }
    free(b.busy);
}

/* ------------------------------------------------------------ transfers */

typedef struct xfer_bucket {
    int src, dst, c0, c1;
    uint64_t count, bytes;
} xfer_bucket_t;

static void transfers(svg_t *s)
{
    const tr_trace_t *tr = s->tr;
    tr_vec_t buckets;
    tr_map_t index;
    tr_vec_init(&buckets, sizeof(xfer_bucket_t));
    tr_map_init(&index);
    for (size_t i = 0; i < tr->xfers.n; i++) {
        const tr_xfer_t *x = TR_AT(&tr->xfers, tr_xfer_t, i);
        if (x->send_t0 == TR_NONE || x->recv_t1 == TR_NONE || x->src < 0 || x->dst < 0 ||
            x->src >= tr->nranks || x->dst >= tr->nranks)
            continue;
        int c0 = (int)(xpos(s, x->send_t0) - LEFT), c1 = (int)(xpos(s, x->recv_t1) - LEFT);
        uint64_t key = ((((uint64_t)x->src * (uint64_t)tr->nranks + (uint64_t)x->dst) << 42) |
                        ((uint64_t)(c0 & 0x1fffff) << 21) | (uint64_t)(c1 & 0x1fffff)) + 1;
        uint32_t k;
        xfer_bucket_t *bk;
        if (tr_map_get(&index, key, &k)) {
            bk = TR_AT(&buckets, xfer_bucket_t, k);
        } else {
            bk = tr_vec_push(&buckets);
            *bk = (xfer_bucket_t){x->src, x->dst, c0, c1, 0, 0};
            tr_map_put(&index, key, (uint32_t)(buckets.n - 1));
        }
        bk->count++;
        bk->bytes += x->bytes;
    }
    for (size_t i = 0; i < buckets.n; i++) {
        const xfer_bucket_t *bk = TR_AT(&buckets, xfer_bucket_t, i);
        char a[32];
        fprintf(s->f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"xfer\" "
                "stroke-width=\"%.1f\"><title>%" PRIu64 " transfer%s rank %d to rank %d, %s</title>"
                "</line>\n", LEFT + bk->c0, xfer_y(s, bk->src), LEFT + bk->c1, xfer_y(s, bk->dst),
                fmin(6, 1 + log2((double)bk->count)), bk->count, bk->count == 1 ? "" : "s",
                bk->src, bk->dst, tr_fmt_bytes(a, (double)bk->bytes));
    }
    tr_vec_free(&buckets);
    tr_map_free(&index);
}

static void legend(svg_t *s, int height)
{
    const tr_trace_t *tr = s->tr;
    int y0 = height - 20 - 20 * (int)((tr->codelets.n + 5) / 6);
    for (size_t i = 0; i < tr->codelets.n; i++) {
        const tr_codelet_t *c = TR_AT(&tr->codelets, tr_codelet_t, i);
        int x = LEFT + (int)(c->index % 6) * 180, y = y0 + 20 * (int)(c->index / 6);
        char col[8];
        fprintf(s->f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\"/>"
                "<text x=\"%d\" y=\"%d\" class=\"row\">", x, y, tr_color(col, c->index), x + 20,
                y + 12);
        tr_put_xml(s->f, c->name);
        fputs("</text>\n", s->f);
    }
}

int tr_cmd_svg(const tr_trace_t *tr, FILE *out, int width)
{
    svg_t s = {tr, out, width, 0, 0, 0, NULL, 0};
    int height;
    layout(&s, &height);
    char wall[32];
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\">\n"
            "<style>.row{font-size:11px} .tick{font-size:10px;text-anchor:middle} "
            ".grid{stroke:#ddd} .lane{stroke:#bbb;stroke-dasharray:2,3} "
            ".xfer{stroke:#333;stroke-opacity:0.55}</style>\n"
            "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            LEFT + width + 20, height, LEFT + width + 20, height);
    fprintf(out, "<text x=\"4\" y=\"16\" font-size=\"13\">Dagger-C trace ");
    tr_put_xml(out, tr->dir);
    fprintf(out, ": %" PRIu64 " tasks on %d rank%s, %s shown</text>\n", tr->ran, tr->nranks,
            tr->nranks == 1 ? "" : "s", tr_fmt_time(wall, (double)(s.t1 - s.t0)));
    axis(&s, height);
    labels(&s);
    task_rows(&s);
    transfers(&s);
    legend(&s, height);
    fputs("</svg>\n", out);
    free(s.rank_y);
    return 0;
}
