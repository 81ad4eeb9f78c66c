/* Evidence for the `init_nop` entry of tests/lsan.supp (not built by CMake): libgvc alone, called
 * as LayoutEngine::render calls it, leaks what the nop2 layout makes for labelled clusters.
 * It reads a positioned DOT with two nested labelled clusters, lays it out with "nop2", renders
 * SVG and then frees everything the API offers (gvFreeRenderData, gvFreeLayout, agclose,
 * gvFreeContext).
 *
 *   gcc -g -fsanitize=address tests/lsan_graphviz_nop.c $(pkg-config --cflags --libs libgvc) -o nop
 *   ASAN_OPTIONS=fast_unwind_on_malloc=0 LSAN_OPTIONS=suppressions=tests/lsan.supp ./nop 10
 *
 * With Graphviz 2.43 (Debian 12's 2.42.2) and the file without its `init_nop` line: 568 bytes in
 * 10 allocations per render (10 renders: 5680 bytes in 100), all below init_nop: the labels of the
 * two clusters (do_graph_label / make_label, with their text) and the cluster arrays (GD_clust) of
 * the graph and the outer cluster; with the whole file: none. */
#include <graphviz/gvc.h>
#include <stdio.h>
#include <stdlib.h>

static const char* const kDot = "digraph G {\n"
                                "  graph [bb=\"0,0,200,200\"];\n"
                                "  node [shape=box];\n"
                                "  subgraph cluster_outer {\n"
                                "    graph [label=\"outer\", bb=\"10,10,190,190\", lp=\"100,180\"];\n"
                                "    a [pos=\"50,50\", width=0.5, height=0.5];\n"
                                "    subgraph cluster_inner {\n"
                                "      graph [label=\"inner\", bb=\"100,20,180,150\", lp=\"140,140\"];\n"
                                "      b [pos=\"140,60\", width=0.5, height=0.5];\n"
                                "    }\n"
                                "  }\n"
                                "  a -> b [pos=\"e,140,60 50,50 80,55 110,58 130,60\"];\n"
                                "}\n";

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? atoi(argv[1]) : 1;
    GVC_t* gvc = gvContext();
    for (int i = 0; i < rounds; ++i) {
        Agraph_t* g = agmemread(kDot);
        if (g == NULL || gvLayout(gvc, g, "nop2") != 0) return 1;
        char* data = NULL;
        unsigned int length = 0;
        if (gvRenderData(gvc, g, "svg", &data, &length) != 0) return 1;
        if (i == 0) printf("%u bytes of SVG\n", length);
        gvFreeRenderData(data);
        gvFreeLayout(gvc, g);
        agclose(g);
    }
    return gvFreeContext(gvc);
}
