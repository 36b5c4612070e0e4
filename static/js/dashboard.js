// The dashboard's charts, drawn with the vendored Chart.js from the data the page embeds
// (#dashboard-charts, made by dashboard/charts.py). Colours are CSS variables of
// oracle.css, read again when the theme changes. Every bar opens the runs behind it.
(function () {
  "use strict";

  var charts = [];

  function colour(name) {
    var probe = document.createElement("span");
    probe.style.color = "var(" + name + ")";
    probe.style.display = "none";
    document.body.appendChild(probe);
    var value = getComputedStyle(probe).color; // light-dark() resolved for this theme
    probe.remove();
    return value;
  }

  function money(value) {
    return "$" + (Math.abs(value) >= 1 || value === 0 ? value.toFixed(2) : value.toFixed(4));
  }

  function options(spec) {
    var text = colour("--muted");
    var grid = colour("--line");
    var valueAxis = spec.horizontal ? "x" : "y";
    var scales = {
      x: { stacked: !!spec.stacked, ticks: { color: text, maxRotation: 0, autoSkipPadding: 12 }, grid: { color: grid } },
      y: { stacked: !!spec.stacked, ticks: { color: text }, grid: { color: grid }, beginAtZero: true }
    };
    scales[valueAxis].ticks.precision = spec.money ? undefined : 0;
    if (spec.money) {
      scales[valueAxis].ticks.callback = function (v) {  // an axis: $0, $0.05, $1.50
        return v === 0 ? "$0" : Math.abs(v) >= 1 ? "$" + v.toFixed(2) : "$" + Number(v.toPrecision(2));
      };
    }
    if (spec.horizontal) {
      scales.y.grid = { display: false };
      scales.y.ticks.autoSkip = false;
      // Long labels (stuck patterns) are cut to the chart's width; the table has them whole.
      scales.y.ticks.callback = function (value) {
        var label = String(this.getLabelForValue(value));
        var room = Math.max(10, Math.floor(this.chart.width / 16));
        return label.length > room ? label.slice(0, room - 1) + "\u2026" : label;
      };
    } else {
      scales.x.grid = { display: false };
    }
    return {
      indexAxis: spec.horizontal ? "y" : "x",
      responsive: true,
      maintainAspectRatio: false,
      animation: false,
      scales: scales,
      plugins: {
        legend: { display: spec.series.length > 1, labels: { color: text, boxWidth: 12 } },
        tooltip: {
          callbacks: spec.money ? {
            label: function (item) { return item.dataset.label + ": " + money(item.parsed[valueAxis]); }
          } : {}
        }
      },
      onHover: function (event, elements) {
        event.native.target.style.cursor = elements.length ? "pointer" : "default";
      },
      onClick: function (event, elements) {
        if (!elements.length) return;
        var hit = elements[0];
        var series = spec.series[hit.datasetIndex];
        var link = series.links[hit.index] ||
          (series.link && series.link + "&" + series.key + "=" + encodeURIComponent(series.keys[hit.index]));
        if (link && series.data[hit.index]) window.location.assign(link);
      }
    };
  }

  function datasets(spec) {
    return spec.series.map(function (series) {
      var fill = spec.colours && spec.series.length === 1
        ? spec.colours.map(colour)
        : colour(series.colour);
      return {
        label: series.label,
        data: series.data,
        backgroundColor: fill,
        borderRadius: 3,
        maxBarThickness: 48
      };
    });
  }

  function draw() {
    var source = document.getElementById("dashboard-charts");
    if (!source || !window.Chart) return;
    var specs = JSON.parse(source.textContent);
    charts.forEach(function (chart) { chart.destroy(); });
    charts = [];
    document.querySelectorAll("canvas[data-chart]").forEach(function (canvas) {
      var spec = specs[canvas.dataset.chart];
      if (!spec) return;
      charts.push(new window.Chart(canvas, {
        type: spec.kind,
        data: { labels: spec.labels, datasets: datasets(spec) },
        options: options(spec)
      }));
    });
    document.documentElement.dataset.chartsDrawn = String(charts.length);
  }

  draw();
  // The theme button sets <html data-theme>; "system" follows the operating system.
  new MutationObserver(draw).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  if (window.matchMedia) window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", draw);
})();
