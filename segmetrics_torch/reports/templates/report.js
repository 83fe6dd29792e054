// The error browser's script (segmetrics-torch, written for this page; no library: sorting one table, filtering it by
// name and drawing two galleries from a JSON block are a few dozen lines, and a vendored table library would still
// need the galleries). Every name from the file system goes into the page through textContent or setAttribute,
// never through innerHTML, so a file named with markup stays text. (This file is inlined in a script element: it
// must never hold the characters that close one.)
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("report-data").textContent);

  // ---------------------------------------------------------------- per-image table: sort and filter
  const table = document.getElementById("per-image-table");
  const body = table.tBodies[0];
  const shown = document.getElementById("shown");
  function key(row, col, numeric) {
    const cell = row.cells[col];
    if (!numeric) return cell.textContent;
    const v = cell.getAttribute("data-v");
    return v === "" ? null : Number(v);
  }
  table.querySelectorAll("th").forEach(function (th) {
    th.querySelector("button").addEventListener("click", function () {
      const col = Number(th.getAttribute("data-col"));
      const numeric = th.getAttribute("data-type") === "number";
      const ascending = th.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("th").forEach(function (other) { other.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      const rows = Array.from(body.rows);
      rows.sort(function (a, b) {
        const x = key(a, col, numeric), y = key(b, col, numeric);
        if (x === null || y === null) return (x === null) - (y === null); // no value: last either way
        const order = numeric ? x - y : x.localeCompare(y);
        return ascending ? order : -order;
      });
      body.append(...rows); // moves the rows: one reflow
    });
  });
  const filter = document.getElementById("filter");
  function applyFilter() {
    const needle = filter.value.toLowerCase();
    let count = 0;
    for (const row of body.rows) {
      const keep = row.cells[2].textContent.toLowerCase().includes(needle);
      row.hidden = !keep;
      count += keep ? 1 : 0;
    }
    shown.textContent = count + " of " + body.rows.length + " rows";
  }
  filter.addEventListener("input", applyFilter);
  applyFilter();

  // ---------------------------------------------------------------- galleries
  function element(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (cls) node.className = cls;
    return node;
  }
  function picture(src, caption, href) {
    const figure = element("figure");
    if (src) {
      const img = element("img");
      img.setAttribute("src", src);
      img.setAttribute("alt", caption);
      img.setAttribute("loading", "lazy");
      figure.append(img);
    }
    const label = element("figcaption");
    if (href) {
      const link = element("a", caption);
      link.setAttribute("href", href);
      label.append(link);
    } else {
      label.textContent = caption;
    }
    figure.append(label);
    return figure;
  }
  function fill(select, values, labels) {
    select.replaceChildren(...values.map(function (value, i) {
      const option = element("option", labels ? labels[i] : value);
      option.value = String(value);
      return option;
    }));
  }
  // image, ground truth, then prediction and overlay of each given method
  function strip(image, methods) {
    const row = element("div", undefined, "strip");
    if (image.src) row.append(picture(image.src, "image", image.src_href));
    if (image.gt || image.gt_href) row.append(picture(image.gt, "ground truth", image.gt_href));
    for (const method of methods) {
      const pred = image.preds[method];
      if (!pred) continue;
      if (pred.pred || pred.href) row.append(picture(pred.pred, method + ": prediction", pred.href));
      if (pred.err) row.append(picture(pred.err, method + ": errors" + (pred.caption ? " (" + pred.caption + ")" : "")));
      if (pred.note) row.append(element("p", method + ": " + pred.note, "note"));
    }
    if (image.note) row.append(element("p", image.note, "note"));
    return row;
  }

  const selects = {
    dataset: document.getElementById("worst-dataset"),
    method: document.getElementById("worst-method"),
    measure: document.getElementById("worst-measure"),
  };
  const kInput = document.getElementById("worst-k");
  const gallery = document.getElementById("gallery");
  const sideSelect = document.getElementById("side-image");
  const side = document.getElementById("side");
  fill(selects.dataset, data.datasets);
  fill(selects.method, data.methods);
  // the measures that rank images (a worst-k list somewhere): a threshold or a count has none, and was the first
  // choice of a boundary page, whose gallery then opened empty
  const ranked = new Set();
  for (const byMethod of Object.values(data.worst)) {
    for (const byMeasure of Object.values(byMethod)) Object.keys(byMeasure).forEach(function (k) { ranked.add(k); });
  }
  const worstMeasures = data.measures.filter(function (m) { return ranked.has(m.key); });
  const shownMeasures = worstMeasures.length ? worstMeasures : data.measures;
  fill(selects.measure, shownMeasures.map(function (m) { return m.key; }), shownMeasures.map(function (m) {
    return m.label + (m.higher === true ? " ↑" : m.higher === false ? " ↓" : "");
  }));

  function drawGallery() {
    const k = Math.max(1, Math.min(data.kmax, Math.floor(Number(kInput.value)) || 1));
    const byMethod = (data.worst[selects.dataset.value] || {})[selects.method.value] || {};
    const order = (byMethod[selects.measure.value] || []).slice(0, k);
    const label = selects.measure.selectedOptions.length ? selects.measure.selectedOptions[0].textContent : "";
    gallery.replaceChildren(...order.map(function (index, rank) {
      const image = data.images[index];
      const pred = image.preds[selects.method.value] || { values: {} };
      const card = element("div", undefined, "card");
      card.setAttribute("data-image", String(index));
      card.append(element("h4", (rank + 1) + ". " + image.dataset + " / " + image.image + " — " + label + " = " +
        (pred.values[selects.measure.value] || "-")));
      card.append(strip(image, [selects.method.value]));
      card.addEventListener("click", function () { sideSelect.value = String(index); drawSide(); });
      return card;
    }));
    if (!order.length) gallery.append(element("p", "No image has a value of this measure.", "note"));
  }
  function drawSide() {
    const image = data.images[Number(sideSelect.value)];
    if (!image) { side.replaceChildren(element("p", "No image to show.", "note")); return; }
    const values = element("table", undefined, "results");
    const head = element("tr");
    head.append(element("th", "method"), ...data.columns.map(function (c) { return element("th", c.label); }));
    values.append(head);
    for (const method of data.methods) {
      const pred = image.preds[method];
      if (!pred) continue;
      const row = element("tr");
      row.append(element("td", method), ...data.columns.map(function (c) {
        return element("td", pred.values[c.key] || "-", "num");
      }));
      values.append(row);
    }
    side.replaceChildren(element("h4", image.dataset + " / " + image.image), strip(image, data.methods), values);
  }
  fill(sideSelect, data.images.map(function (_, i) { return i; }), data.images.map(function (im) {
    return im.dataset + " / " + im.image;
  }));
  for (const control of [selects.dataset, selects.method, selects.measure]) control.addEventListener("change", drawGallery);
  kInput.addEventListener("input", drawGallery);
  sideSelect.addEventListener("change", drawSide);
  drawGallery();
  drawSide();
})();
