#pragma once
// Internal to passlens_layout: edge routes for LayoutEngine::layoutStable.
#include <passlens/layout/LayoutEngine.h>

#include <vector>

namespace passlens::stable {

/// An axis-aligned box, points.
struct Rect {
    double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

/// True when the spline (LayoutEdge::spline form) passes through one of `boxes` grown by
/// `margin` points, sampled at 17 points per Bézier segment.
bool crosses(const std::vector<LayoutPoint>& spline, const std::vector<Rect>& boxes, double margin);

/// A route from the bottom of `tail` to the top of `head` (boxes of the two nodes) in
/// LayoutEdge::spline form (start point, then groups of three Bézier points), ending 10 points
/// before the head's top, where `tip` (the arrowhead's point) is set. Tries a vertical run at
/// x positions nearest to the nodes first and takes the first whose samples miss every box of
/// `obstacles` (the two nodes' own boxes are skipped); without one, a plain S curve.
/// `labelAt` receives a place for the edge's label, right of the route's middle. Never throws.
/// `tailAt` / `headAt` in (0, 1): where along the bottom of the tail and the top of the head
/// the route starts and ends (0.5 = the middle), so that several edges of one node spread out.
std::vector<LayoutPoint> route(const Rect& tail, const Rect& head, const std::vector<Rect>& obstacles, LayoutPoint& tip,
                               LayoutPoint& labelAt, double labelWidth, double tailAt = 0.5, double headAt = 0.5);

} // namespace passlens::stable
