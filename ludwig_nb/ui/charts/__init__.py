"""The chart layer: every chart a view of a run or a search draws, and the data it draws.

* curves.py: :class:`CurveData`, the curves a run's events make (pure, bounded memory);
* curve_chart.py: the live dashboard's bqplot charts (:class:`CurveChart`);
* svg.py: inline SVG line charts for static summaries and comparisons (``svg_line_chart``);
* svg_widgets.py: live SVG charts in a core ``HTML`` widget: ``SvgCurveChart`` where bqplot
  does not render (Colab), ``SvgTimeline`` for ``%gpu_watch`` everywhere;
* gpu_timeline.py: the ``%gpu_watch`` timeline's picture (``timeline_svg``): % and °C in
  two panels on one time axis;
* search.py: a search's inline SVG views (trials' curves, best so far, parameters).

Importing the package imports none of them (bqplot and ipywidgets load with the modules
that need them).
"""
