// The clock of a running run's seconds gauge.

import { byId, streamState } from "./page.js";

// The server sends the time used at each checkpoint; between them (a long call
// streaming) the seconds gauge counts on by itself while the run works. The timer
// runs only while the page shows a running run's seconds gauge.
var clock = null; // {key, base, at}: the seconds counted on since the server's figure
var ticking = null; // the timer, while a run is live

function liveSecondsGauge() {
  return document.querySelector("#gauges[data-status=running] .gauge[data-ticking]");
}

// Called whenever the gauges may have changed: starts the clock when a run's gauge
// appears, stops it when the run ends or its gauges leave the page.
export function watchClock() {
  if (!liveSecondsGauge()) {
    stopClock();
  } else if (!ticking) {
    tick();
    ticking = setInterval(tick, 1000);
  }
}

// The clock outlives a reload of the tab (sessionStorage): the server's figure is
// the last checkpoint's, which a long call streaming leaves behind.
function keepClock(kept) {
  try { sessionStorage.setItem("oracle-clock", JSON.stringify(kept)); } catch (e) { /* off */ }
}

function keptClock(key) {
  try {
    var kept = JSON.parse(sessionStorage.getItem("oracle-clock") || "null");
    return kept && kept.key === key ? kept : null;
  } catch (e) { return null; }
}

function stopClock() {
  if (ticking) clearInterval(ticking);
  ticking = null;
  clock = null;
}

function tick() {
  var gauge = liveSecondsGauge();
  if (!gauge) { stopClock(); return; }
  var gauges = byId("gauges"), state = streamState();
  // a new round counts anew; the run's id keys what a reload of this tab picks up
  var key = (state ? state.run : "") + " " + gauges.dataset.status + " " + gauges.dataset.round;
  var sent = parseFloat(gauge.dataset.ticking), now = Date.now();
  if (!clock) clock = keptClock(key);
  if (!clock || clock.key !== key || sent > clock.base + (now - clock.at) / 1000) {
    clock = { key: key, base: sent, at: now };
  }
  var seconds = clock.base + (now - clock.at) / 1000;
  keepClock(clock);
  var meter = gauge.querySelector("meter");
  var limit = parseFloat(meter.dataset.limit || "0");
  gauge.querySelector(".gauge-figures").textContent =
    Math.floor(seconds) + " / " + gauge.dataset.limitShown;
  if (limit) meter.value = Math.min(100, Math.round(100 * seconds / limit));
}
