// rtfprof report: draws the page from the JSON document in #rtfprof-data
// (written by src/outputs/html.rs; its layout is described in the README).
//
// Plain DOM, no framework, nothing fetched. Text from the profile (node
// names, op types, paths) only ever enters the page as text nodes or
// attribute values, never as HTML.
//
// The page state (tab, metric, zoom, search, table sort and filter) lives in
// the URL's fragment, so a view can be bookmarked, and tests drive the page
// by opening it with a fragment such as #tab=ops&sort=exec_micros:desc.
'use strict';

(function () {
  const started = performance.now();
  const DATA = JSON.parse(document.getElementById('rtfprof-data').textContent);

  /** Nodes narrower than this many pixels are not drawn (nor their subtrees). */
  const MIN_PX = 1;
  /** Nodes narrower than this get no label. */
  const LABEL_PX = 28;
  /** Height of a flame chart row, in pixels (also in report.css). */
  const ROW = 18;
  /** Rows of a long table drawn at once. */
  const TABLE_ROWS = 200;

  const METRICS = {
    exec_micros: { label: 'execution time', short: 'time', unit: 'micros' },
    accelerator_micros: { label: 'accelerator time', short: 'accelerator', unit: 'micros' },
    cpu_micros: { label: 'cpu time', short: 'cpu', unit: 'micros' },
    requested_bytes: { label: 'requested bytes', short: 'bytes', unit: 'bytes' },
    peak_bytes: { label: 'peak bytes', short: 'peak bytes', unit: 'bytes' },
    residual_bytes: { label: 'residual bytes', short: 'residual bytes', unit: 'bytes' },
    output_bytes: { label: 'output bytes', short: 'output bytes', unit: 'bytes' },
    parameters: { label: 'parameters', short: 'params', unit: 'count' },
    float_ops: { label: 'float ops', short: 'float ops', unit: 'count' },
    run_count: { label: 'occurrence', short: 'occurrence', unit: 'count' },
  };
  /** Flame chart metrics always offered; the others only when not all zero. */
  const ALWAYS = ['exec_micros', 'requested_bytes'];

  // ---------------------------------------------------------------- helpers

  /** An element with attributes (`text`, `class`, `on<event>` are special)
   * and children (strings become text nodes). */
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    setAttrs(e, attrs);
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }

  function svg(tag, attrs, ...children) {
    const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
    setAttrs(e, attrs);
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }

  function setAttrs(e, attrs) {
    if (!attrs) return;
    for (const k of Object.keys(attrs)) {
      const v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === 'text') e.textContent = v;
      else if (k === 'class') e.setAttribute('class', v);
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
  }

  /** tfprof's number formats, as src/show/format.rs writes them: 1000-based
   * units, two decimals rounded as printf rounds the double n / scale. That
   * is what toFixed does too, except on an exact tie (1125 bytes is 1.125
   * KB, exactly a double), which printf rounds to even and toFixed up. A
   * tie n / scale = (2h + 1) / 200 is a double exactly when 25 divides
   * 2h + 1. Negative numbers and those below the first scale are written
   * whole; fractions (means) with one decimal. */
  function scaled(n, small, scales) {
    for (let i = scales.length - 1; i >= 0; i--) {
      const scale = scales[i][0];
      if (n < scale) continue;
      const unit = scale / 100;
      const rest = n % unit;
      const h = (n - rest) / unit;
      if (Number.isSafeInteger(n) && 2 * rest === unit && (2 * h + 1) % 25 === 0) {
        const even = h + (h % 2);
        return Math.floor(even / 100) + '.' + String(even % 100).padStart(2, '0') + scales[i][1];
      }
      return (n / scale).toFixed(2) + scales[i][1];
    }
    return (Number.isInteger(n) ? String(n) : n.toFixed(1)) + small;
  }
  const UNITS = {
    bytes: (n) => scaled(n, 'B', [[1e3, 'KB'], [1e6, 'MB']]),
    micros: (n) => scaled(n, 'us', [[1e3, 'ms'], [1e6, 'sec']]),
    count: (n) => scaled(n, '', [[1e3, 'k'], [1e6, 'm'], [1e9, 'b']]),
  };
  function fmt(unit, n) {
    return n === null || n === undefined ? '-' : UNITS[unit](n);
  }
  function pct(part, whole) {
    return whole > 0 ? (100 * part / whole).toFixed(1) + '%' : '-';
  }

  function hash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return h >>> 0;
  }

  /** A name matcher: a case-insensitive regex, or the literal text when the
   * text is not a valid regex. */
  function matcher(text) {
    if (!text) return null;
    try {
      return new RegExp(text, 'i');
    } catch (e) {
      return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
    }
  }

  function debounce(f, ms) {
    let t = 0;
    return (...args) => {
      clearTimeout(t);
      t = setTimeout(() => f(...args), ms);
    };
  }

  // ------------------------------------------------------------------ state

  const state = {};
  for (const part of location.hash.replace(/^#/, '').split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const key = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    state[key] = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1).replace(/\+/g, ' '));
  }

  function setState(key, value) {
    if (value === '' || value === null || value === undefined) delete state[key];
    else state[key] = String(value);
    const parts = Object.keys(state).map((k) => encodeURIComponent(k) + '=' + encodeURIComponent(state[k]));
    try {
      history.replaceState(null, '', '#' + parts.join('&'));
    } catch (e) {
      // Some browsers refuse to change a file:// URL; the state still applies.
    }
  }

  // ------------------------------------------------------------------ trees

  /** Children lists, depths and labels of a tree given in pre-order by its
   * parent indices. */
  function prepareTree(names, parents, view) {
    const n = names.length;
    const kids = new Array(n);
    const depth = new Int32Array(n);
    for (let i = 0; i < n; i++) kids[i] = [];
    for (let i = 1; i < n; i++) {
      const p = parents[i];
      kids[p].push(i);
      depth[i] = depth[p] + 1;
    }
    let byName = null;
    return {
      n,
      names,
      parents,
      kids,
      depth,
      view,
      /** A node's name without its parent's (`conv1/Conv2D` under `conv1`). */
      label(i) {
        const p = parents[i];
        const name = names[i];
        if (p > 0) {
          const prefix = names[p] + '/';
          if (name.startsWith(prefix)) return name.slice(prefix.length);
        }
        return name;
      },
      find(name) {
        if (!byName) {
          byName = new Map();
          for (let i = n - 1; i >= 0; i--) byName.set(names[i], i);
        }
        const i = byName.get(name);
        return i === undefined ? -1 : i;
      },
    };
  }

  // ------------------------------------------------------------ flame chart

  /**
   * An icicle chart: the root on top, each node as wide as its value, its
   * children below it left to right. Click zooms into a node (its ancestors
   * stay on top, click one to zoom out), hover shows the node's values,
   * search highlights the nodes whose names match.
   *
   * opts: tree, value(i) (the width), colour(i), info(i) -> [[label, text]],
   *       key (the state key of the zoom), title(i) (optional).
   */
  class Flame {
    constructor(opts) {
      this.o = opts;
      this.t = opts.tree;
      this.zoomed = 0;
      this.hits = null;
      this.hitCount = 0;
      this.crumbs = el('div', { class: 'crumbs' });
      this.canvas = el('div', { class: 'flame-canvas', role: 'img', 'aria-label': 'flame chart' });
      this.info = el('div', { class: 'flame-info' }, 'Hover a node for its values; click it to zoom in.');
      this.tip = el('div', { class: 'tip', hidden: true });
      this.root = el('div', { class: 'flame' }, this.crumbs, this.canvas, this.info);
      document.body.append(this.tip);
      this.canvas.addEventListener('click', (e) => {
        const i = this.nodeAt(e.target);
        if (i >= 0) this.zoom(i);
      });
      this.canvas.addEventListener('mousemove', (e) => {
        const i = this.nodeAt(e.target);
        if (i < 0) return this.hideTip();
        this.showInfo(i);
        this.showTip(i, e.clientX, e.clientY);
      });
      this.canvas.addEventListener('mouseleave', () => this.hideTip());
      const zoomTo = state[opts.key] ? this.t.find(state[opts.key]) : -1;
      if (zoomTo >= 0) this.zoomed = zoomTo;
    }

    nodeAt(target) {
      const r = target.closest ? target.closest('.fr') : null;
      return r ? Number(r.dataset.i) : -1;
    }

    zoom(i) {
      this.zoomed = i;
      setState(this.o.key, i > 0 ? this.t.names[i] : '');
      this.render();
    }

    search(text) {
      const re = matcher(text);
      if (!re) {
        this.hits = null;
        this.hitCount = 0;
      } else {
        this.hits = new Uint8Array(this.t.n);
        let count = 0;
        for (let i = 0; i < this.t.n; i++) {
          if (re.test(this.t.names[i])) {
            this.hits[i] = 1;
            count++;
          }
        }
        this.hitCount = count;
      }
      this.render();
    }

    /** The total value of the matching nodes, each counted once (a match
     * inside a match is part of it). */
    matchedValue() {
      if (!this.hits) return 0;
      const t = this.t;
      const inside = new Uint8Array(t.n);
      let sum = 0;
      for (let i = 0; i < t.n; i++) {
        const parentInside = i > 0 && inside[t.parents[i]];
        inside[i] = this.hits[i] || parentInside;
        if (this.hits[i] && !parentInside) sum += Math.max(0, this.o.value(i));
      }
      return sum;
    }

    width() {
      return this.canvas.clientWidth || Math.max(320, document.documentElement.clientWidth - 48);
    }

    render() {
      const t = this.t;
      const value = (i) => Math.max(0, this.o.value(i));
      const W = this.width();
      const frag = document.createDocumentFragment();
      const chain = [];
      for (let a = t.parents[this.zoomed]; a >= 0; a = t.parents[a]) chain.unshift(a);
      chain.forEach((a, row) => frag.append(this.rect(a, 0, 1, row, true, W)));
      let rows = chain.length + 1;
      let drawn = chain.length;
      const stack = [[this.zoomed, 0, 1, chain.length]];
      while (stack.length) {
        const [i, x, w, row] = stack.pop();
        frag.append(this.rect(i, x, w, row, false, W));
        drawn++;
        if (row + 1 > rows) rows = row + 1;
        const kids = t.kids[i];
        if (!kids.length) continue;
        let sum = 0;
        for (const c of kids) sum += value(c);
        const denom = Math.max(value(i), sum);
        if (denom <= 0) continue;
        let cx = x;
        for (const c of kids) {
          const cw = (w * value(c)) / denom;
          if (cw * W >= MIN_PX) stack.push([c, cx, cw, row + 1]);
          cx += cw;
        }
      }
      this.canvas.replaceChildren(frag);
      this.canvas.style.height = rows * ROW + 'px';
      this.canvas.dataset.px = W;
      this.canvas.dataset.drawn = drawn;
      this.renderCrumbs();
      if (this.o.onRender) this.o.onRender(this);
    }

    rect(i, x, w, row, ancestor, W) {
      const d = document.createElement('div');
      let cls = 'fr';
      if (ancestor) cls += ' anc';
      if (i === this.zoomed && i > 0) cls += ' zoomed';
      if (this.hits) cls += this.hits[i] ? ' hit' : ' dim';
      d.className = cls;
      d.style.left = x * 100 + '%';
      d.style.width = w * 100 + '%';
      d.style.top = row * ROW + 'px';
      d.style.background = this.o.colour(i);
      d.dataset.i = i;
      d.dataset.d = this.t.depth[i];
      if (w * W >= LABEL_PX) d.textContent = this.t.label(i);
      return d;
    }

    renderCrumbs() {
      const t = this.t;
      const parts = [];
      for (let a = this.zoomed; a >= 0; a = t.parents[a]) parts.unshift(a);
      const items = [];
      parts.forEach((a, k) => {
        if (k) items.push(el('span', { class: 'sep' }, '›'));
        items.push(el('button', { type: 'button', class: 'crumb', onclick: () => this.zoom(a) }, t.label(a)));
      });
      this.crumbs.replaceChildren(...items);
    }

    describe(i) {
      const t = this.t;
      const rows = [['name', t.names[i]]].concat(this.o.info(i));
      const root = Math.max(0, this.o.value(0));
      const zoomed = Math.max(0, this.o.value(this.zoomed));
      const v = Math.max(0, this.o.value(i));
      rows.push(['share', pct(v, root) + ' of root' + (this.zoomed > 0 ? ', ' + pct(v, zoomed) + ' of the zoomed node' : '')]);
      return rows;
    }

    showInfo(i) {
      const old = this.canvas.querySelector('.fr.sel');
      if (old) old.classList.remove('sel');
      const rect = this.canvas.querySelector('.fr[data-i="' + i + '"]');
      if (rect) rect.classList.add('sel');
      const items = [];
      for (const [k, v] of this.describe(i)) items.push(el('span', { class: 'k' }, k), el('span', { class: 'v' }, v));
      this.info.replaceChildren(...items);
      this.info.dataset.i = i;
    }

    showTip(i, x, y) {
      const rows = this.describe(i).map(([k, v]) => el('tr', null, el('th', null, k), el('td', null, v)));
      this.tip.replaceChildren(el('table', null, ...rows));
      this.tip.hidden = false;
      const r = this.tip.getBoundingClientRect();
      const left = Math.min(x + 14, window.innerWidth - r.width - 8);
      const top = y + 16 + r.height > window.innerHeight ? y - r.height - 10 : y + 16;
      this.tip.style.left = Math.max(4, left) + 'px';
      this.tip.style.top = Math.max(4, top) + 'px';
    }

    hideTip() {
      this.tip.hidden = true;
    }
  }

  function palette(unit, key, synthetic) {
    const h = hash(key);
    const base = { micros: [8, 48], bytes: [185, 235], count: [95, 150] }[unit];
    const hue = base[0] + (h % 1000) / 1000 * (base[1] - base[0]);
    const light = synthetic ? 84 : 62 + ((h >> 10) % 12);
    const sat = synthetic ? 35 : 72;
    return 'hsl(' + hue.toFixed(0) + ',' + sat + '%,' + light + '%)';
  }

  // ----------------------------------------------------------------- tables

  /**
   * A table sortable by every column (click a heading) and filterable by
   * name. columns: [{key, label, value(i), num?, unit?, text?(i), render?(i),
   * cls?}]; the first column is the name, `num` columns are right-aligned
   * numbers (formatted in `unit`, or by `text`); `tie(a, b)` orders equal
   * rows (by name if not given). Long tables draw their first TABLE_ROWS rows.
   */
  class Table {
    constructor(opts) {
      this.o = opts;
      const [key, dir] = (state[opts.sortKey] || opts.defaultSort).split(':');
      this.sortCol = Math.max(0, opts.columns.findIndex((c) => c.key === key));
      this.desc = dir !== 'asc';
      this.filterInput = el('input', {
        type: 'search',
        placeholder: 'filter by name (regex)',
        value: state[opts.filterKey] || '',
        'aria-label': 'filter by name',
        oninput: debounce(() => {
          setState(opts.filterKey, this.filterInput.value);
          this.render();
        }, 120),
      });
      this.count = el('span', { class: 'count' });
      this.thead = el('thead');
      this.tbody = el('tbody');
      this.more = el('div', { class: 'more' });
      this.table = el('table', { class: 'data ' + (opts.cls || '') }, this.thead, this.tbody);
      this.root = el('div', { class: 'table-wrap' },
        el('div', { class: 'toolbar' }, this.filterInput, this.count),
        el('div', { class: 'scroll' }, this.table), this.more);
    }

    sortBy(k) {
      if (k === this.sortCol) this.desc = !this.desc;
      else {
        this.sortCol = k;
        this.desc = k !== 0;
      }
      setState(this.o.sortKey, this.o.columns[k].key + ':' + (this.desc ? 'desc' : 'asc'));
      this.render();
    }

    render() {
      const o = this.o;
      const cols = o.columns;
      const heads = cols.map((c, k) => {
        const sorted = k === this.sortCol;
        return el('th', {
          class: (c.num ? 'num' : '') + (sorted ? ' sorted' : ''),
          'aria-sort': sorted ? (this.desc ? 'descending' : 'ascending') : 'none',
          'data-key': c.key,
          title: 'sort by ' + c.label,
          onclick: () => this.sortBy(k),
        }, c.label, sorted ? el('span', { class: 'arrow' }, this.desc ? ' ▼' : ' ▲') : null);
      });
      this.thead.replaceChildren(el('tr', null, ...heads));
      const re = matcher(this.filterInput.value);
      let rows = [];
      for (let i = 0; i < o.rows; i++) if (!re || re.test(o.name(i))) rows.push(i);
      const col = cols[this.sortCol];
      const sign = this.desc ? -1 : 1;
      // Each row's key once, not once a comparison (a step table's min and
      // max scan every step).
      const keys = new Map(rows.map((i) => [i, col.value(i)]));
      rows.sort((a, b) => {
        const va = keys.get(a);
        const vb = keys.get(b);
        const c = typeof va === 'string' ? va.localeCompare(vb) : va - vb;
        return c ? sign * c : o.tie ? o.tie(a, b) : o.name(a).localeCompare(o.name(b));
      });
      const total = rows.length;
      const shown = state[o.allKey] ? rows : rows.slice(0, TABLE_ROWS);
      const frag = document.createDocumentFragment();
      for (const i of shown) {
        const cells = cols.map((c) => {
          const v = c.value(i);
          if (c.render) return el('td', { class: c.cls || '' }, c.render(i));
          if (!c.num) return el('td', { class: 'name', title: v }, v);
          return el('td', { class: 'num', 'data-v': v }, c.text ? c.text(i) : fmt(c.unit, v));
        });
        frag.append(el('tr', { 'data-i': i }, ...cells));
      }
      this.tbody.replaceChildren(frag);
      this.count.textContent = total + (total === o.rows ? ' rows' : ' of ' + o.rows + ' rows match');
      if (shown.length < total) {
        this.more.replaceChildren('Showing the first ' + shown.length + ' of ' + total + ' rows. ',
          el('button', { type: 'button', onclick: () => { setState(o.allKey, '1'); this.render(); } }, 'show all'));
      } else {
        this.more.replaceChildren();
      }
    }
  }

  // ----------------------------------------------------------------- header

  /** A row of toggle buttons, one per value (`data-metric`, or the
   * `data-<attr>` of `opts.attr`), the current one `on` (and
   * `aria-pressed` with `opts.pressed`); a click keeps the pick in the URL
   * under `key` (as `opts.store(value)` says, if given) and hands it to
   * `pick` (which redraws). */
  function segButtons(values, current, key, label, pick, opts = {}) {
    const attr = opts.attr || 'metric';
    const mark = (button, on) => {
      button.classList.toggle('on', on);
      if (opts.pressed) button.setAttribute('aria-pressed', on ? 'true' : 'false');
    };
    return values.map((v) => {
      const props = {
        type: 'button',
        class: 'seg' + (v === current ? ' on' : ''),
        ['data-' + attr]: v,
        onclick: (e) => {
          setState(key, opts.store ? opts.store(v) : v);
          for (const x of e.currentTarget.parentNode.children) mark(x, x.dataset[attr] === v);
          pick(v);
        },
      };
      if (opts.pressed) props['aria-pressed'] = v === current ? 'true' : 'false';
      return el('button', props, label(v));
    });
  }

  function dl(pairs) {
    const items = [];
    for (const [k, v] of pairs) if (v !== null && v !== undefined && v !== '') items.push(el('dt', null, k), el('dd', null, v));
    return el('dl', { class: 'facts' }, ...items);
  }

  /** `0..3, 7, 9..12` for sorted step numbers. */
  function ranges(steps) {
    const parts = [];
    for (let i = 0; i < steps.length; ) {
      let j = i;
      while (j + 1 < steps.length && steps[j + 1] === steps[j] + 1) j++;
      parts.push(j > i ? steps[i] + '..' + steps[j] : String(steps[i]));
      i = j + 1;
    }
    return parts.join(', ');
  }

  function header() {
    const h = DATA.header;
    const facts = [];
    facts.push(['inputs', h.inputs.length ? el('span', null, ...h.inputs.map(([flag, path]) => el('code', { class: 'input' }, flag + ' ' + path))) : '-']);
    if (DATA.kind === 'report') {
      facts.push(['steps', h.steps.length ? h.steps.length + ' (' + ranges(h.steps) + ')' : 'none recorded']);
      facts.push(['shown', h.step < 0 ? (h.steps.length > 1 ? "each node's average over the steps it ran in" : 'the one step') : 'step ' + h.step]);
      facts.push(['graph nodes', String(h.graph_nodes)]);
      facts.push(['run graph coverage', h.coverage.length ? h.coverage.map(([name, c]) => (name ? name + ': ' : '') + c.toFixed(2)).join(', ') : '-']);
      facts.push(['devices', h.devices.length
        ? el('span', null, ...h.devices.map(([d, us]) => el('code', { class: 'device' }, d + (us > 0 ? ' (' + fmt('micros', us) + ' busy)' : ''))))
        : 'none named']);
      if (h.options.length) facts.push(['view options', el('span', null, ...h.options.map(([k, v]) => el('code', null, k + ' ' + v)))]);
      if (h.notes.length) facts.push(['notes', h.notes.join('; ')]);
    }
    return el('header', { class: 'top' },
      el('h1', null, DATA.kind === 'diff' ? 'rtfprof diff' : 'rtfprof report', el('span', { class: 'gen' }, h.generator)),
      dl(facts));
  }

  // ------------------------------------------------------------ report tabs

  function flamePanel(tree) {
    const t = prepareTree(tree.names, tree.parents, tree.view);
    const available = Object.keys(METRICS).filter((m) => ALWAYS.includes(m) || tree.total[m][0] !== 0);
    let metric = available.includes(state.metric) ? state.metric : 'exec_micros';
    const strings = tree.strings;
    // Scope nodes take their op type's colour (name scopes are pale); code
    // nodes their file's.
    const colour = tree.view === 'code'
      ? (i) => palette(METRICS[metric].unit, t.names[i].split(':')[0], i === 0)
      : (i) => {
        const op = strings[tree.op[i]];
        return palette(METRICS[metric].unit, op || t.label(i), !op && t.kids[i].length > 0);
      };
    const info = (i) => {
      const m = METRICS[metric];
      const rows = [];
      if (tree.op[i]) rows.push(['op type', strings[tree.op[i]]]);
      if (tree.device[i]) rows.push(['device', strings[tree.device[i]]]);
      rows.push([m.label + ' (own / total)', fmt(m.unit, tree.own[metric][i]) + ' / ' + fmt(m.unit, tree.total[metric][i])]);
      if (metric !== 'exec_micros') rows.push(['execution time', fmt('micros', tree.own.exec_micros[i]) + ' / ' + fmt('micros', tree.total.exec_micros[i])]);
      if (metric !== 'requested_bytes') rows.push(['requested bytes', fmt('bytes', tree.own.requested_bytes[i]) + ' / ' + fmt('bytes', tree.total.requested_bytes[i])]);
      rows.push(['occurrence', fmt('count', tree.total.run_count[i])]);
      return rows;
    };
    const status = el('span', { class: 'status' });
    const flame = new Flame({
      tree: t,
      value: (i) => tree.total[metric][i],
      colour,
      info,
      key: 'zoom.' + tree.view,
      onRender: (f) => {
        const m = METRICS[metric];
        let text = m.label + ': ' + fmt(m.unit, tree.total[metric][f.zoomed]) + (f.zoomed > 0 ? ' in the zoomed node' : ' in total');
        if (f.hits) text += ' · ' + f.hitCount + ' matching nodes, ' + fmt(m.unit, f.matchedValue()) + ' (' + pct(f.matchedValue(), Math.max(0, tree.total[metric][0])) + ' of root)';
        status.textContent = text;
        if (tree.total[metric][f.zoomed] <= 0) status.textContent += ' · nothing to draw for this metric';
      },
    });
    const buttons = segButtons(available, metric, 'metric', (m) => METRICS[m].short, (m) => {
      metric = m;
      flame.render();
    }, { pressed: true });
    const searchBox = el('input', {
      type: 'search',
      class: 'search',
      placeholder: 'search names (regex)',
      'aria-label': 'search node names',
      value: state.search || '',
      oninput: debounce(() => {
        setState('search', searchBox.value);
        flame.search(searchBox.value);
      }, 150),
    });
    const panel = el('section', { class: 'panel', id: 'panel-' + tree.view },
      el('div', { class: 'toolbar' },
        el('span', { class: 'segs', role: 'group', 'aria-label': 'metric' }, ...buttons),
        searchBox,
        el('button', { type: 'button', onclick: () => flame.zoom(0) }, 'reset zoom'),
        status),
      flame.root);
    return {
      panel,
      show() {
        flame.hits = null;
        if (state.search) flame.search(state.search);
        else flame.render();
        const hover = state.hover ? t.find(state.hover) : -1;
        if (hover >= 0) flame.showInfo(hover);
      },
      resize: () => flame.render(),
    };
  }

  function opsPanel(ops) {
    const n = ops.names.length;
    const time = ops.own.exec_micros;
    const totalTime = time.reduce((a, b) => a + b, 0);
    const metricCols = ['exec_micros', 'accelerator_micros', 'cpu_micros', 'requested_bytes', 'peak_bytes', 'residual_bytes', 'output_bytes', 'parameters', 'float_ops', 'run_count'];
    const columns = [{ key: 'name', label: 'op type', value: (i) => ops.names[i] },
      { key: 'graph_nodes', label: 'graph nodes', num: true, value: (i) => ops.graph_nodes[i], text: (i) => String(ops.graph_nodes[i]) }];
    for (const m of metricCols) {
      columns.push({ key: m, label: METRICS[m].label, num: true, unit: METRICS[m].unit, value: (i) => ops.own[m][i] });
      if (m === 'exec_micros') {
        columns.push({ key: 'time_share', label: '% of time', num: true, value: (i) => time[i], text: (i) => pct(time[i], totalTime) });
      }
    }
    const table = new Table({ columns, rows: n, name: (i) => ops.names[i], sortKey: 'sort', filterKey: 'filter', allKey: 'all', defaultSort: 'exec_micros:desc', cls: 'ops' });
    const panel = el('section', { class: 'panel', id: 'panel-ops' },
      el('p', { class: 'note' }, 'The op view: one row per op type with its own values (' + n + ' op types). Click a column heading to sort.'),
      table.root);
    return { panel, show: () => table.render() };
  }

  function barChart(series, labels, unit) {
    // series: [{name, values, cls}]
    const W = 720;
    const H = 220;
    const left = 70;
    const bottom = 34;
    const top = 14;
    const max = Math.max(1, ...series.flatMap((s) => s.values));
    const n = labels.length;
    const group = (W - left - 10) / Math.max(1, n);
    const bar = Math.max(2, Math.min(40, (group * 0.8) / series.length));
    const y = (v) => top + (H - top - bottom) * (1 - v / max);
    const chart = svg('svg', { class: 'chart', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': 'step times' });
    for (const f of [0, 0.5, 1]) {
      chart.append(svg('line', { x1: left, x2: W - 10, y1: y(max * f), y2: y(max * f), class: 'grid' }));
      chart.append(svg('text', { x: left - 6, y: y(max * f) + 4, class: 'axis', 'text-anchor': 'end' }, fmt(unit, Math.round(max * f))));
    }
    labels.forEach((label, k) => {
      const gx = left + k * group + (group - bar * series.length) / 2;
      series.forEach((s, j) => {
        const v = s.values[k];
        chart.append(svg('rect', { x: gx + j * bar, y: y(v), width: bar - 1, height: Math.max(0, H - bottom - y(v)), class: 'bar ' + s.cls, 'data-step': label, 'data-v': v },
          svg('title', null, 'step ' + label + ': ' + s.name + ' ' + fmt(unit, v))));
      });
      if (n <= 40 || k % Math.ceil(n / 40) === 0) {
        chart.append(svg('text', { x: left + k * group + group / 2, y: H - bottom + 16, class: 'axis', 'text-anchor': 'middle' }, String(label)));
      }
    });
    chart.append(svg('text', { x: left + (W - left) / 2, y: H - 4, class: 'axis', 'text-anchor': 'middle' }, 'step'));
    const legend = el('div', { class: 'legend' }, ...series.map((s) => el('span', null, el('i', { class: 'swatch ' + s.cls }), s.name)));
    return el('figure', { class: 'chart-box' }, chart, legend);
  }

  function sparkline(values) {
    const W = 80;
    const H = 16;
    const max = Math.max(1, ...values);
    const pts = values.map((v, k) => ((values.length > 1 ? (k * W) / (values.length - 1) : W / 2).toFixed(1) + ',' + (H - 1 - ((H - 2) * v) / max).toFixed(1)));
    return svg('svg', { class: 'spark', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H }, svg('polyline', { points: pts.join(' ') }));
  }

  function stats(values) {
    const n = Math.max(1, values.length);
    const mean = values.reduce((a, b) => a + b, 0) / n;
    const std = Math.sqrt(values.reduce((a, b) => a + (b - mean) * (b - mean), 0) / n);
    return { mean, std, cv: mean ? std / mean : 0 };
  }

  /** XPlane traces: each step as `rtfprof steps` splits it (XProf's
   * categories, then transfers and device idle on GPUs), stacked. */
  function breakdownPart(b) {
    const col = (key) => b.columns.find((c) => c[0] === key);
    const stepTime = col('step_time_us');
    const parts = b.columns.filter((c) => c[0] !== 'step_time_us' && c[0] !== 'transfers_us' && c[0] !== 'device_idle_us');
    const shown = parts.filter((c) => c[2].some((v) => v > 0));
    const W = 720;
    const H = 220;
    const left = 70;
    const bottom = 34;
    const top = 14;
    const max = Math.max(1, ...stepTime[2]);
    const n = b.names.length;
    const group = (W - left - 10) / Math.max(1, n);
    const bar = Math.max(2, Math.min(40, group * 0.8));
    const y = (v) => top + (H - top - bottom) * (1 - v / max);
    const chart = svg('svg', { class: 'chart', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': 'step time breakdown' });
    for (const f of [0, 0.5, 1]) {
      chart.append(svg('line', { x1: left, x2: W - 10, y1: y(max * f), y2: y(max * f), class: 'grid' }));
      chart.append(svg('text', { x: left - 6, y: y(max * f) + 4, class: 'axis', 'text-anchor': 'end' }, fmt('micros', Math.round(max * f))));
    }
    b.names.forEach((name, k) => {
      let acc = 0;
      const x = left + k * group + (group - bar) / 2;
      shown.forEach((c, j) => {
        const v = c[2][k] || 0;
        if (v <= 0) return;
        chart.append(svg('rect', { x, y: y(acc + v), width: bar - 1, height: Math.max(0, y(acc) - y(acc + v)), class: 'bar cat' + (j % 8), 'data-step': name, 'data-v': v },
          svg('title', null, name + ': ' + c[1] + ' ' + fmt('micros', Math.round(v)))));
        acc += v;
      });
      if (n <= 40 || k % Math.ceil(n / 40) === 0) {
        chart.append(svg('text', { x: left + k * group + group / 2, y: H - bottom + 16, class: 'axis', 'text-anchor': 'middle' }, name));
      }
    });
    const legend = el('div', { class: 'legend' }, ...shown.map((c, j) => el('span', null, el('i', { class: 'swatch cat' + (j % 8) }), c[1])));
    const rows = b.names.map((name, k) => el('tr', null, el('td', { class: 'name' }, name),
      ...b.columns.map((c) => el('td', { class: 'num', 'data-v': c[2][k] }, c[2][k] === null ? '-' : fmt('micros', Math.round(c[2][k]))))));
    const table = el('div', { class: 'scroll' }, el('table', { class: 'data breakdown' },
      el('thead', null, el('tr', null, el('th', null, 'step'), ...b.columns.map((c) => el('th', { class: 'num' }, c[1])))),
      el('tbody', null, ...rows)));
    const device = col('device_idle_us') ? ' Transfers and device idle go beyond XProf: the step\'s time in memcpys on the GPUs, and the time no GPU ran anything.' : '';
    return [el('h2', null, 'Step time breakdown'),
      el('p', { class: 'note' }, 'Each step as rtfprof steps splits it: XProf\'s steps and categories (input_pipeline_analyzer).' + device),
      el('figure', { class: 'chart-box' }, chart, legend), table];
  }

  /** The XLA instructions (hlo) or GPU kernels (kernels) that ran. */
  function devicePanel(kind, data) {
    const n = data.name.length;
    const text = (key) => ({ key, label: key.replace(/_/g, ' '), value: (i) => String(data[key][i]) });
    const num = (key, label, unit) => ({ key, label, num: true, value: (i) => data[key][i], text: unit ? undefined : (i) => String(data[key][i]), unit });
    const micros = (key, label) => ({ key, label, num: true, value: (i) => data[key][i], text: (i) => data[key][i].toFixed(3) + 'us' });
    const columns = kind === 'hlo'
      ? [{ key: 'name', label: 'HLO op', value: (i) => data.name[i] }, text('category'), text('framework_op'), num('occurrences', 'occurrences'),
        micros('total_us', 'total'), micros('self_us', 'self'), text('module'), text('source')]
      : [{ key: 'name', label: 'kernel', value: (i) => data.name[i] }, text('op_name'), num('occurrences', 'occurrences'),
        micros('total_us', 'total'), micros('min_us', 'min'), micros('max_us', 'max'), num('registers', 'regs'), num('shmem_bytes', 'shmem', 'bytes'),
        text('launch'), { key: 'occupancy_pct', label: 'occupancy', num: true, value: (i) => data.occupancy_pct[i], text: (i) => data.occupancy_pct[i].toFixed(2) + '%' },
        text('tensor_core')];
    const table = new Table({ columns, rows: n, name: (i) => data.name[i], sortKey: kind + 'sort', filterKey: kind + 'filter', allKey: kind + 'all', defaultSort: 'total_us:desc', cls: kind });
    const what = kind === 'hlo'
      ? 'XLA instructions that ran (' + n + '), as XProf\'s hlo_stats: the framework op each implements (JAX\'s name stack), its occurrences, total and self time. Inside XLA\'s command buffers, where XProf attributes nothing, rtfprof names the instruction of each kernel.'
      : 'GPU kernels (' + n + ' launch configurations), as XProf\'s kernel_stats, each with the framework op that launched it.';
    return { panel: el('section', { class: 'panel', id: 'panel-' + kind }, el('p', { class: 'note' }, what), table.root), show: () => table.render() };
  }

  function stepsPanel(steps) {
    const n = steps.steps.length;
    const parts = [];
    if (steps.breakdown) parts.push(...breakdownPart(steps.breakdown));
    const wallKnown = steps.wall_micros.some((v) => v > 0);
    const series = [];
    if (wallKnown) series.push({ name: 'wall time (first start to last end)', values: steps.wall_micros, cls: 's-wall' });
    series.push({ name: 'summed execution time of the nodes', values: steps.totals.exec_micros, cls: 's-op' });
    const summary = [];
    if (wallKnown) {
      const s = stats(steps.wall_micros);
      summary.push(['wall time per step', fmt('micros', s.mean) + ' mean, ' + fmt('micros', s.std) + ' std, CV ' + s.cv.toFixed(3)]);
    }
    const s = stats(steps.totals.exec_micros);
    summary.push(['summed execution time per step', fmt('micros', s.mean) + ' mean, ' + fmt('micros', s.std) + ' std, CV ' + s.cv.toFixed(3)]);
    const b = stats(steps.totals.requested_bytes);
    summary.push(['requested bytes per step', fmt('bytes', b.mean) + ' mean, CV ' + b.cv.toFixed(3)]);
    parts.push(el('h2', null, steps.breakdown ? 'Step markers' : 'Step times'), dl(summary), barChart(series, steps.steps, 'micros'));
    if (steps.devices.length) {
      const rows = steps.devices.map(([d, values]) => el('tr', null, el('td', { class: 'name' }, d), ...values.map((v) => el('td', { class: 'num', 'data-v': v }, fmt('micros', v)))));
      parts.push(el('h2', null, 'Busy time per device'),
        el('div', { class: 'scroll' }, el('table', { class: 'data devices' },
          el('thead', null, el('tr', null, el('th', null, 'device'), ...steps.steps.map((st) => el('th', { class: 'num' }, 'step ' + st)))),
          el('tbody', null, ...rows))));
    }
    let table = null;
    if (n < 2) {
      parts.push(el('p', { class: 'note' }, 'Only one step was recorded: nothing varies across steps.'));
    } else {
      const nodes = steps.nodes;
      const metrics = Object.keys(nodes.metrics);
      let metric = metrics.includes(state.smetric) ? state.smetric : metrics[0];
      const series = () => nodes.metrics[metric];
      const unit = () => METRICS[metric].unit;
      const columns = [
        { key: 'name', label: 'node', value: (i) => nodes.names[i] },
        { key: 'steps_ran', label: 'steps ran', num: true, value: (i) => nodes.steps_ran[i], text: (i) => String(nodes.steps_ran[i]) },
        { key: 'mean', label: 'mean', num: true, value: (i) => series().mean[i], text: (i) => fmt(unit(), series().mean[i]) },
        { key: 'std', label: 'std', num: true, value: (i) => series().std[i], text: (i) => fmt(unit(), series().std[i]) },
        { key: 'cv', label: 'CV', num: true, value: (i) => series().cv[i], text: (i) => series().cv[i].toFixed(3) },
        { key: 'min', label: 'min', num: true, value: (i) => Math.min(...series().values[i]), text: (i) => fmt(unit(), Math.min(...series().values[i])) },
        { key: 'max', label: 'max', num: true, value: (i) => Math.max(...series().values[i]), text: (i) => fmt(unit(), Math.max(...series().values[i])) },
        { key: 'values', label: 'per step', value: (i) => 0, render: (i) => sparkline(series().values[i]), cls: 'sparkcell' },
      ];
      table = new Table({ columns, rows: nodes.names.length, name: (i) => nodes.names[i], sortKey: 'ssort', filterKey: 'sfilter', allKey: 'sall', defaultSort: 'std:desc', cls: 'steps' });
      const buttons = segButtons(metrics, metric, 'smetric', (m) => METRICS[m].short, (m) => {
        metric = m;
        table.render();
      });
      parts.push(el('h2', null, 'How each node varies across steps'),
        el('p', { class: 'note' }, 'Each graph node of the scope view with its total at every step; mean, population standard deviation and coefficient of variation (std / mean) as in --output csv/json. Sorted by standard deviation: the nodes that vary most come first.'),
        el('div', { class: 'toolbar' }, el('span', { class: 'segs' }, ...buttons)),
        table.root);
    }
    return { panel: el('section', { class: 'panel', id: 'panel-steps' }, ...parts), show: () => table && table.render() };
  }

  // ----------------------------------------------------------------- memory

  /** One allocator's bytes in use over the step, as a step line (a value
   * holds until the next event), its peak marked. */
  function memoryChart(a) {
    const W = 900;
    const H = 230;
    const left = 78;
    const right = 16;
    const top = 14;
    const bottom = 36;
    const n = a.micros.length;
    const start = Math.min(0, a.micros[0]);
    const end = Math.max(start + 1, a.micros[n - 1], a.peak_micros);
    let max = Math.max(1, a.peak_bytes);
    for (const v of a.bytes) if (v > max) max = v;
    const x = (t) => left + ((W - left - right) * (t - start)) / (end - start);
    const y = (v) => top + (H - top - bottom) * (1 - Math.max(0, v) / max);
    // A replay starts from nothing; a measured count at its first value.
    let held = a.measured ? a.bytes[0] : 0;
    const pts = [x(start).toFixed(1) + ',' + y(held).toFixed(1)];
    for (let k = 0; k < n; k++) {
      const px = x(a.micros[k]).toFixed(1);
      pts.push(px + ',' + y(held).toFixed(1), px + ',' + y(a.bytes[k]).toFixed(1));
      held = a.bytes[k];
    }
    pts.push(x(end).toFixed(1) + ',' + y(held).toFixed(1));
    const chart = svg('svg', { class: 'chart mchart', viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-label': 'bytes in use of ' + a.name });
    for (const f of [0, 0.5, 1]) {
      chart.append(svg('line', { x1: left, x2: W - right, y1: y(max * f), y2: y(max * f), class: 'grid' }));
      chart.append(svg('text', { x: left - 6, y: y(max * f) + 4, class: 'axis', 'text-anchor': 'end' }, fmt('bytes', Math.round(max * f))));
    }
    for (const f of [0, 0.5, 1]) {
      const t = start + (end - start) * f;
      chart.append(svg('text', { x: x(t), y: H - bottom + 16, class: 'axis', 'text-anchor': f === 0 ? 'start' : f === 1 ? 'end' : 'middle' }, fmt('micros', Math.round(t))));
    }
    chart.append(svg('text', { x: left + (W - left - right) / 2, y: H - 4, class: 'axis', 'text-anchor': 'middle' }, 'time from the step\'s start'));
    chart.append(svg('polyline', { class: 'mcurve', points: pts.join(' ') }));
    const px = x(a.peak_micros);
    chart.append(svg('line', { class: 'mpeakline', x1: px, x2: px, y1: top, y2: H - bottom }));
    chart.append(svg('circle', { class: 'mpeak', cx: px, cy: y(a.peak_bytes), r: 4, 'data-bytes': a.peak_bytes, 'data-micros': a.peak_micros },
      svg('title', null, 'peak: ' + fmt('bytes', a.peak_bytes) + ' at ' + fmt('micros', a.peak_micros))));
    return el('figure', { class: 'chart-box' }, chart);
  }

  /**
   * The memory tab: for the chosen step, each allocator's bytes in use over
   * the step and the nodes live at its peak (`rtfprof memory`'s analysis).
   * Several steps: a menu picks one, the one with the highest peak first.
   */
  /**
   * The XLA programs that ran (XPlane traces), as `rtfprof memory` lists
   * them: each program's peak by XLA's buffer assignment and the buffers
   * live there, largest first. `null` without programs.
   */
  function programsPart(programs) {
    if (!programs || !programs.length) return null;
    const tables = [];
    const sections = programs.map((p, k) => {
      if (p.error) return el('section', { class: 'program', 'data-program': p.name }, el('h3', null, p.name), el('p', { class: 'note' }, 'no memory: ' + p.error));
      const table = new Table({
        columns: [
          { key: 'op', label: 'JAX op', value: (i) => p.op_name[i] },
          { key: 'bytes', label: 'bytes', num: true, unit: 'bytes', value: (i) => p.bytes[i] },
          { key: 'share', label: '% of peak', num: true, value: (i) => p.bytes[i], text: (i) => pct(p.bytes[i], Math.max(0, p.peak_bytes)) },
          { key: 'kind', label: 'kind', value: (i) => p.kind[i] },
          { key: 'instruction', label: 'HLO instruction', value: (i) => p.instruction[i] },
          // (Last: a tuple's shape can be long.)
          { key: 'shape', label: 'shape', value: (i) => p.shape[i] },
        ],
        rows: p.bytes.length,
        name: (i) => p.op_name[i] + ' ' + p.instruction[i],
        // Equal bytes keep XProf's order (whole-run buffers first).
        tie: (i, j) => i - j,
        sortKey: 'psort.' + k,
        filterKey: 'pfilter.' + k,
        allKey: 'pall.' + k,
        defaultSort: 'bytes:desc',
        cls: 'pbuffers',
      });
      tables.push(table);
      return el('section', { class: 'program', 'data-program': p.name },
        el('h3', null, p.name),
        el('p', { class: 'mfacts' },
          'peak ', el('strong', { class: 'ppeak-bytes', 'data-v': p.peak_bytes }, fmt('bytes', p.peak_bytes)),
          p.peak_instruction ? ' at ' + p.peak_instruction : '',
          ' · ' + fmt('bytes', p.indefinite_bytes) + ' held for the whole run (parameters ' + fmt('bytes', p.parameter_bytes) + ', outputs ' + fmt('bytes', p.output_bytes) + ')',
          ' · all allocations ' + fmt('bytes', p.total_allocation_bytes)),
        p.bytes.length ? table.root : el('p', { class: 'note' }, 'No buffer is live at the peak.'));
    });
    const part = el('section', { class: 'programs' },
      el('h2', null, 'XLA programs'),
      el('p', { class: 'note' }, 'What each program that ran holds at its own peak, by XLA\'s buffer assignment (as XProf\'s memory_viewer): the instruction and JAX op of every buffer. The allocator\'s events name no op, so a JAX program\'s bytes are (untracked) there; these are compile-time numbers, the same in every run.'),
      ...sections);
    return { part, render: () => { for (const t of tables) t.render(); } };
  }

  function memoryPanel(memory) {
    const programs = programsPart(memory.programs);
    if (!memory.steps.length) {
      const note = el('p', { class: 'note mnone' }, memory.note);
      if (!programs) return { panel: el('section', { class: 'panel', id: 'panel-memory' }, note), show: () => {} };
      return { panel: el('section', { class: 'panel', id: 'panel-memory' }, note, programs.part), show: programs.render };
    }
    const peakOf = (s) => s.allocators.reduce((m, a) => Math.max(m, a.peak_bytes), 0);
    let chosen = memory.steps.findIndex((s) => String(s.step) === state.mstep);
    if (chosen < 0) {
      chosen = 0;
      memory.steps.forEach((s, k) => {
        if (peakOf(s) > peakOf(memory.steps[chosen])) chosen = k;
      });
    }
    const body = el('div', { class: 'mbody' });
    const render = () => {
      const step = memory.steps[chosen];
      const parts = [];
      if (!step.allocators.length) parts.push(el('p', { class: 'note' }, 'No allocation records in step ' + step.step + '.'));
      const tables = [];
      step.allocators.forEach((a, k) => {
        const total = Math.max(0, a.peak_bytes);
        const names = (i) => memory.names[a.live[i]];
        const table = new Table({
          columns: [
            { key: 'name', label: 'node', value: names },
            { key: 'bytes', label: 'live bytes', num: true, unit: 'bytes', value: (i) => a.live_bytes[i] },
            { key: 'share', label: '% of peak', num: true, value: (i) => a.live_bytes[i], text: (i) => pct(a.live_bytes[i], total) },
          ],
          rows: a.live.length,
          name: names,
          // Equal bytes keep rtfprof memory's order (by name, bytewise).
          tie: (i, j) => i - j,
          sortKey: 'msort.' + k,
          filterKey: 'mfilter.' + k,
          allKey: 'mall.' + k,
          defaultSort: 'bytes:desc',
          cls: 'live',
        });
        tables.push(table);
        const how = a.measured
          ? "the allocator's own count of bytes in use (it includes what was allocated before the step)"
          : "replayed from 0 at the step's start, allocations before frees of the same microsecond (the peak is an upper bound)";
        parts.push(el('section', { class: 'allocator', 'data-allocator': a.name },
          el('h2', null, a.name),
          el('p', { class: 'mfacts' },
            'peak ', el('strong', { class: 'mpeak-bytes', 'data-v': a.peak_bytes }, fmt('bytes', a.peak_bytes)),
            ' at ', el('span', { class: 'mpeak-micros', 'data-v': a.peak_micros }, fmt('micros', a.peak_micros)),
            ' from the step\'s start · ' + a.events + ' allocation events · ' + how),
          memoryChart(a),
          el('h3', null, 'Live at the peak (' + a.live.length + ' nodes)'),
          a.live.length ? table.root : el('p', { class: 'note' }, 'No node holds bytes at the peak.')));
      });
      body.replaceChildren(...parts);
      for (const t of tables) t.render();
    };
    const parts = [el('p', { class: 'note' }, 'Each allocator\'s bytes in use over the step, as rtfprof memory computes them from the allocation records, and the nodes holding bytes at its peak, largest first; (untracked) is the bytes in use that no node of the step holds.')];
    if (memory.steps.length > 1) {
      const menu = el('select', {
        class: 'mstep',
        'aria-label': 'step',
        onchange: () => {
          chosen = Number(menu.value);
          setState('mstep', memory.steps[chosen].step);
          render();
        },
      }, ...memory.steps.map((s, k) => el('option', { value: k, selected: k === chosen }, 'step ' + s.step + ' (highest peak ' + fmt('bytes', peakOf(s)) + ')')));
      parts.push(el('div', { class: 'toolbar' }, el('span', { class: 'note' }, 'step:'), menu));
    }
    parts.push(body);
    if (programs) parts.push(programs.part);
    const show = () => {
      render();
      if (programs) programs.render();
    };
    return { panel: el('section', { class: 'panel', id: 'panel-memory' }, ...parts), show };
  }

  // --------------------------------------------------------------- diff page

  function diffPage(d) {
    const t = prepareTree(d.names, d.parents, 'diff');
    const unit = d.unit;
    const widthModes = { max: 'larger side', left: d.left_name, right: d.right_name };
    let mode = widthModes[state.width] ? state.width : 'max';
    const l = (i) => d.left[i];
    const r = (i) => d.right[i];
    const value = (i) => {
      if (mode === 'left') return l(i) || 0;
      if (mode === 'right') return r(i) || 0;
      return Math.max(l(i) || 0, r(i) || 0);
    };
    const relative = (i) => {
      const a = l(i) || 0;
      const b = r(i) || 0;
      const size = Math.max(Math.abs(a), Math.abs(b));
      return size ? (a - b) / size : 0;
    };
    const colour = (i) => {
      const rel = relative(i);
      if (rel === 0) return 'hsl(0,0%,86%)';
      const k = Math.min(1, Math.abs(rel));
      return rel > 0 ? 'hsl(4,' + (40 + 50 * k).toFixed(0) + '%,' + (82 - 30 * k).toFixed(0) + '%)' : 'hsl(215,' + (40 + 50 * k).toFixed(0) + '%,' + (82 - 30 * k).toFixed(0) + '%)';
    };
    const diffText = (i) => {
      const delta = (l(i) || 0) - (r(i) || 0);
      const ratio = l(i) !== null && r(i) !== null && r(i) !== 0 ? ' x' + (l(i) / r(i)).toFixed(1) : '';
      return (delta < 0 ? '-' : '+') + fmt(unit, Math.abs(delta)) + ratio;
    };
    const info = (i) => [
      [d.left_name, l(i) === null ? 'absent' : fmt(unit, l(i))],
      [d.right_name, r(i) === null ? 'absent' : fmt(unit, r(i))],
      ['difference', diffText(i)],
    ];
    const rowsByNode = new Map();
    const flame = new Flame({
      tree: t,
      value,
      colour,
      info,
      key: 'zoom.diff',
      onRender: (f) => {
        for (const [i, row] of rowsByNode) row.classList.toggle('current', i === f.zoomed);
      },
    });
    const list = el('div', { class: 'difftree', role: 'tree' });
    for (const [i, depth] of d.listed) {
      const delta = (l(i) || 0) - (r(i) || 0);
      const sides = [];
      if (l(i) !== null) sides.push(d.left_name + ':' + fmt(unit, l(i)));
      if (r(i) !== null) sides.push(d.right_name + ':' + fmt(unit, r(i)));
      const row = el('div', {
        class: 'drow',
        role: 'treeitem',
        'data-i': i,
        style: 'padding-left:' + (6 + depth * 14) + 'px',
        title: d.names[i],
        onclick: () => flame.zoom(i),
      },
      el('span', { class: 'dname' }, d.names[i]),
      el('span', { class: 'dsides' }, '(' + sides.join(' ') + ')'),
      el('span', { class: delta > 0 ? 'dplus' : delta < 0 ? 'dminus' : 'dzero' }, diffText(i)));
      rowsByNode.set(i, row);
      list.append(row);
    }
    const modeButtons = segButtons(Object.keys(widthModes), mode, 'width', (m) => widthModes[m], (m) => {
      mode = m;
      flame.render();
    }, { attr: 'width', store: (m) => (m === 'max' ? '' : m) });
    const facts = dl([
      ['metric', d.metric],
      ['listed', 'nodes with size >= ' + fmt(unit, d.min_size) + ' and relative difference >= ' + (100 * d.delta).toFixed(1) + '%, or such children, sorted by absolute difference'],
    ]);
    const legend = el('div', { class: 'legend' },
      el('span', null, el('i', { class: 'swatch grow' }), d.left_name + ' larger (+)'),
      el('span', null, el('i', { class: 'swatch shrink' }), d.right_name + ' larger (-)'),
      el('span', null, el('i', { class: 'swatch same' }), 'equal'));
    const searchBox = el('input', {
      type: 'search',
      class: 'search',
      placeholder: 'search names (regex)',
      value: state.search || '',
      oninput: debounce(() => {
        setState('search', searchBox.value);
        flame.search(searchBox.value);
      }, 150),
    });
    const panel = el('section', { class: 'panel on', id: 'panel-diff' }, facts,
      el('div', { class: 'diff-grid' },
        el('div', { class: 'diff-list' }, el('h2', null, 'Diff tree'), list),
        el('div', { class: 'diff-flame' },
          el('h2', null, 'Differential flame chart'),
          el('div', { class: 'toolbar' }, el('span', { class: 'note' }, 'width:'), el('span', { class: 'segs' }, ...modeButtons), searchBox,
            el('button', { type: 'button', onclick: () => flame.zoom(0) }, 'reset zoom')),
          legend, flame.root)));
    return {
      panel,
      show() {
        if (state.search) flame.search(state.search);
        else flame.render();
        const hover = state.hover ? t.find(state.hover) : -1;
        if (hover >= 0) flame.showInfo(hover);
      },
      resize: () => flame.render(),
    };
  }

  // ------------------------------------------------------------------- main

  function main() {
    const app = document.getElementById('app');
    const parts = [header()];
    const tabs = [];
    if (DATA.kind === 'diff') {
      tabs.push(['diff', 'diff', diffPage(DATA.diff)]);
    } else {
      for (const tree of DATA.trees) tabs.push([tree.view, tree.view + ' view', flamePanel(tree)]);
      if (DATA.ops) tabs.push(['ops', 'op view', opsPanel(DATA.ops)]);
      if (DATA.device && DATA.device.hlo.name) tabs.push(['hlo', 'HLO ops', devicePanel('hlo', DATA.device.hlo)]);
      if (DATA.device && DATA.device.kernels.name) tabs.push(['kernels', 'kernels', devicePanel('kernels', DATA.device.kernels)]);
      if (DATA.steps) tabs.push(['steps', 'steps', stepsPanel(DATA.steps)]);
      // (ranksPanel is in ranks.js, written after this file.)
      if (DATA.ranks) tabs.push(['ranks', 'ranks', ranksPanel(DATA.ranks, { el, svg, fmt, dl, segButtons, Table, state, setState })]);
      if (DATA.memory) tabs.push(['memory', 'memory', memoryPanel(DATA.memory)]);
    }
    const current = tabs.some(([id]) => id === state.tab) ? state.tab : tabs[0][0];
    const nav = el('nav', { class: 'tabs', role: 'tablist' });
    const shown = new Set();
    const select = (id) => {
      for (const [tid, , p] of tabs) {
        const on = tid === id;
        p.panel.classList.toggle('on', on);
        p.panel.hidden = !on;
        if (on && !shown.has(tid)) {
          shown.add(tid);
          p.show();
        }
      }
      for (const b of nav.children) {
        b.classList.toggle('on', b.dataset.tab === id);
        b.setAttribute('aria-selected', b.dataset.tab === id ? 'true' : 'false');
      }
    };
    for (const [id, label] of tabs) {
      nav.append(el('button', {
        type: 'button',
        role: 'tab',
        'data-tab': id,
        onclick: () => {
          setState('tab', id);
          select(id);
        },
      }, label));
    }
    if (tabs.length > 1) parts.push(nav);
    parts.push(...tabs.map(([, , p]) => p.panel));
    app.replaceChildren(...parts);
    select(current);
    window.addEventListener('resize', debounce(() => {
      for (const [id, , p] of tabs) if (shown.has(id) && p.resize) p.resize();
    }, 150));
    document.body.dataset.renderMs = Math.round(performance.now() - started);
    document.body.dataset.ready = '1';
  }

  main();
})();
