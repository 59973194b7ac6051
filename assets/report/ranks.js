// rtfprof report: the ranks tab, drawn from `rtfprof ranks`' JSON document
// (DATA.ranks; its layout is in the README, "Ranks"). report.js calls
// ranksPanel with its helpers; this file is written after it, in the same
// script element.

/**
 * The ranks tab: a heat map of each rank's steps (step time, own time or
 * exposed communication; darker is longer), the stragglers and the rule
 * that named them, and a table of the ranks sortable by every column.
 * `ui` holds report.js' helpers: el, svg, fmt, dl, segButtons, Table, state, setState.
 */
function ranksPanel(R, ui) {
  const { el, svg, fmt, dl, segButtons, Table, state } = ui;
  const ranks = R.ranks;
  const steps = [];
  for (const r of ranks) for (const s of r.steps) if (!steps.includes(s.step)) steps.push(s.step);
  const stepOf = (r, name) => r.steps.find((s) => s.step === name);
  const METRICS = {
    step: { label: 'step time', value: (s) => s.step_time_us },
    own: { label: 'own time', value: (s) => s.step_time_us - (s.exposed_communication_us || 0) },
    exposed: { label: 'exposed communication', value: (s) => s.exposed_communication_us },
  };
  const metrics = Object.keys(METRICS).filter((m) => m !== 'exposed' || ranks.some((r) => r.steps.some((s) => s.exposed_communication_us !== null)));
  let metric = metrics.includes(state.rmetric) ? state.rmetric : 'step';
  const straggler = new Set(R.stragglers);

  /** A light-to-dark blue for t in [0, 1]. */
  function shade(t) {
    const stops = [[247, 251, 255], [198, 219, 239], [107, 174, 214], [33, 113, 181], [8, 48, 107]];
    const x = Math.max(0, Math.min(1, t)) * (stops.length - 1);
    const k = Math.min(stops.length - 2, Math.floor(x));
    const f = x - k;
    const c = stops[k].map((v, j) => Math.round(v + f * (stops[k + 1][j] - v)));
    return 'rgb(' + c.join(',') + ')';
  }

  const mapBox = el('div', { class: 'heatmap-box' });
  function drawMap() {
    const m = METRICS[metric];
    const values = [];
    for (const r of ranks) for (const s of r.steps) { const v = m.value(s); if (v !== null && v !== undefined) values.push(v); }
    const lo = values.length ? Math.min(...values) : 0;
    const hi = values.length ? Math.max(...values) : 1;
    const left = 64;
    const top = 22;
    const cellW = Math.max(6, Math.min(64, Math.floor(880 / Math.max(1, steps.length))));
    const cellH = Math.max(8, Math.min(18, Math.floor(540 / Math.max(1, ranks.length))));
    const W = left + cellW * steps.length + 10;
    const H = top + cellH * ranks.length + 6;
    const map = svg('svg', { class: 'heatmap', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': m.label + ' by rank and step' });
    // Column labels: `#N` for PyTorch's ProfilerStep#N, as many as fit.
    const label = (name) => (steps.every((s) => s.startsWith('ProfilerStep#')) ? name.slice('ProfilerStep'.length) : name);
    const widest = Math.max(...steps.map((s) => label(s).length)) * 6.5 + 8;
    const every = Math.max(1, Math.ceil(widest / cellW));
    steps.forEach((name, k) => {
      if (k % every === 0) map.append(svg('text', { x: left + k * cellW + cellW / 2, y: top - 8, class: 'axis step-label', 'text-anchor': 'middle', 'data-step': name }, label(name)));
    });
    ranks.forEach((r, i) => {
      const y = top + i * cellH;
      const slow = straggler.has(r.rank);
      map.append(svg('text', { x: left - 6, y: y + cellH / 2 + 4, class: 'axis rank-label' + (slow ? ' straggler' : ''), 'text-anchor': 'end', 'data-rank': r.rank },
        (slow ? '\u2691 ' : '') + 'rank ' + r.rank));
      steps.forEach((name, k) => {
        const s = stepOf(r, name);
        const v = s ? m.value(s) : null;
        const known = v !== null && v !== undefined;
        map.append(svg('rect', {
          x: left + k * cellW, y, width: cellW - 1, height: cellH - 1,
          class: 'hm-cell' + (known ? '' : ' none') + (slow ? ' straggler' : ''),
          fill: known ? shade(hi > lo ? (v - lo) / (hi - lo) : 0.5) : null,
          'data-rank': r.rank, 'data-step': name, 'data-v': known ? v : null,
        }, svg('title', null, 'rank ' + r.rank + ' (' + r.name + '), ' + name + ': ' + m.label + ' ' + (known ? fmt('micros', v) : 'not recorded'))));
      });
    });
    const legend = el('div', { class: 'legend hm-legend' },
      el('span', null, fmt('micros', lo)), el('i', { class: 'hm-scale' }), el('span', null, fmt('micros', hi)),
      el('span', { class: 'note' }, m.label + ' of each rank (row) at each step (column); darker is longer; \u2691 marks a straggler.'));
    mapBox.replaceChildren(map, legend);
  }

  const buttons = segButtons(metrics, metric, 'rmetric', (m) => METRICS[m].label, (m) => {
    metric = m;
    drawMap();
  });

  const rule = R.straggler_rule;
  const named = ranks.filter((r) => straggler.has(r.rank));
  const facts = [
    ['ranks', ranks.length + ' (' + (R.source === 'pytorch' ? 'PyTorch traces' : 'XPlane hosts') + '; rank ids ' + (R.rank_ids === 'distributedInfo' ? 'from distributedInfo.rank' : 'in the order of the file names') + ')'],
    ['stragglers', rule.threshold_us === null ? 'none named: the rule needs 3 or more ranks with steps'
      : named.length ? el('span', { class: 'stragglers' }, ...named.map((r) => el('code', { class: 'straggler', 'data-rank': r.rank }, 'rank ' + r.rank + ' (' + r.name + ', own time ' + fmt('micros', r.own_time_us) + ')')))
        : 'none'],
    ['rule', rule.text.charAt(0).toUpperCase() + rule.text.slice(1) + '.' + (rule.threshold_us === null ? '' : ' Median own time ' + fmt('micros', rule.median_us) + ', scaled MAD ' + fmt('micros', rule.scaled_mad_us) + ', threshold ' + fmt('micros', rule.threshold_us) + '.')],
    ['communication', R.communication_split],
  ];

  const n = ranks.length;
  const num = (key, label, get, unit) => ({ key, label, num: true, value: (i) => get(ranks[i]), unit: unit || 'micros' });
  const columns = [
    { key: 'name', label: 'trace', value: (i) => ranks[i].name },
    { key: 'rank', label: 'rank', num: true, value: (i) => ranks[i].rank, text: (i) => String(ranks[i].rank) },
    { key: 'steps', label: 'steps', num: true, value: (i) => ranks[i].steps.length, text: (i) => String(ranks[i].steps.length) },
    num('mean', 'step time', (r) => r.step_time_us && r.step_time_us.mean),
    num('std', 'std', (r) => r.step_time_us && r.step_time_us.std),
    { key: 'cv', label: 'CV', num: true, value: (i) => ranks[i].step_time_us ? ranks[i].step_time_us.cv : null, text: (i) => ranks[i].step_time_us ? (100 * ranks[i].step_time_us.cv).toFixed(2) + '%' : '-' },
    num('own', 'own time', (r) => r.own_time_us),
    num('compute', 'compute', (r) => r.compute_us),
    num('communication', 'communication', (r) => r.communication_us),
    num('exposed', 'exposed comm.', (r) => r.exposed_communication_us),
    num('idle', 'idle', (r) => r.idle_us),
    { key: 'overlap', label: 'comm/compute overlap', num: true, value: (i) => ranks[i].comm_comp_overlap_pctg,
      text: (i) => ranks[i].comm_comp_overlap_pctg === null ? '-' : ranks[i].comm_comp_overlap_pctg.toFixed(2) + '%' },
    { key: 'straggler', label: 'straggler', value: (i) => (ranks[i].straggler ? 'yes' : ''), render: (i) => (ranks[i].straggler ? 'yes' : ''), cls: 'flag' },
  ];
  const table = new Table({ columns, rows: n, name: (i) => ranks[i].name, sortKey: 'rsort', filterKey: 'rfilter', allKey: 'rall', defaultSort: 'rank:asc', cls: 'ranks',
    tie: (a, b) => ranks[a].rank - ranks[b].rank });

  const overlapNote = R.source === 'pytorch'
    ? 'The overlap is HTA 0.5.0\'s get_comm_comp_overlap (events rounded to whole microseconds, the last step left out).'
    : 'The overlap is HTA\'s get_comm_comp_overlap definition on the trace\'s picoseconds.';
  const panel = el('section', { class: 'panel', id: 'panel-ranks' },
    el('h2', null, 'Step time by rank and step'),
    el('div', { class: 'toolbar' }, el('span', { class: 'segs' }, ...buttons)),
    mapBox,
    el('h2', null, 'Stragglers'),
    dl(facts),
    el('h2', null, 'Ranks'),
    el('p', { class: 'note' }, 'Times are means over each rank\'s steps, as rtfprof ranks gives them; own time is the step time less the exposed communication (the collectives\' time that no computation overlapped). ' + overlapNote),
    table.root);
  return { panel, show: () => { drawMap(); table.render(); } };
}
