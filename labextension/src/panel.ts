/**
 * The sidebar panel: copies the model's view state into the DOM. Every string from the
 * server is set with `textContent` (never innerHTML), so a run called
 * `<img src=x onerror=alert(1)>` shows as those characters.
 */

import { Message } from '@lumino/messaging';
import { Widget } from '@lumino/widgets';

import { SidebarModel } from './model';
import { ControlAction } from './types';
import { Card, Meter, RunFilter, RunGroup, RunGroupKey, RunRow, ViewState } from './view_state';

export const PANEL_ID = 'ludwig-nb-sidebar';
const ACTIONS: ControlAction[] = ['pause', 'resume', 'stop'];
const ACTION_LABELS: Record<ControlAction, string> = {
  stop: 'Stop',
  pause: 'Pause',
  resume: 'Resume'
};

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

function bar(value: number | null, className: string, marker: number | null = null): HTMLElement {
  const outer = el('div', `${className} jp-LudwigNb-bar`);
  if (value === null) {
    outer.classList.add('jp-LudwigNb-bar-empty');
    return outer;
  }
  const inner = el('div', 'jp-LudwigNb-barFill');
  inner.style.width = `${(value * 100).toFixed(1)}%`;
  outer.appendChild(inner);
  if (marker !== null) {
    // the likely early stop: a tick on the bar, so the planned end reads as a bound
    const tick = el('div', 'jp-LudwigNb-barMarker');
    tick.style.left = `${(marker * 100).toFixed(1)}%`;
    tick.title = 'likely early stop';
    outer.appendChild(tick);
  }
  return outer;
}

function renderMeter(meter: Meter): HTMLElement {
  const row = el('div', `jp-LudwigNb-meter jp-LudwigNb-level-${meter.level}`);
  row.dataset.meter = meter.label.toLowerCase();
  if (meter.tooltip) {
    row.title = meter.tooltip;
  }
  row.appendChild(el('span', 'jp-LudwigNb-meterLabel', meter.label));
  row.appendChild(el('span', 'jp-LudwigNb-meterText', meter.text));
  row.appendChild(bar(meter.fraction, 'jp-LudwigNb-meterBar'));
  return row;
}

/** Fill ``node`` (kept across refreshes, so it stays attached) with one card. */
function renderCard(card: Card, node: HTMLElement): HTMLElement {
  node.className = `jp-LudwigNb-card jp-LudwigNb-level-${card.level}`;
  node.dataset.key = card.key;
  const children = [
    el('h3', 'jp-LudwigNb-cardTitle', card.title),
    el('div', 'jp-LudwigNb-cardSubtitle', card.subtitle),
    ...card.meters.map(renderMeter)
  ];
  if (card.throttle.length > 0) {
    children.push(el('div', 'jp-LudwigNb-throttle', `Throttled: ${card.throttle.join(', ')}`));
  }
  node.replaceChildren(...children);
  return node;
}

export class SidebarPanel extends Widget {
  constructor(model: SidebarModel) {
    super();
    this.id = PANEL_ID;
    this.addClass('jp-LudwigNb-panel');
    this.title.caption = 'ludwig_nb: GPUs and runs';
    this._model = model;
    const header = el('h2', 'jp-LudwigNb-header', 'GPUs');
    this._error = el('div', 'jp-LudwigNb-error');
    this._gpuMessage = el('div', 'jp-LudwigNb-gpuMessage');
    this._cards = el('div', 'jp-LudwigNb-cards');
    const runsHeader = el('h2', 'jp-LudwigNb-header', 'Runs');
    this._filters = this._filterControls();
    this._runs = el('ul', 'jp-LudwigNb-runs');
    this._noRuns = el(
      'div',
      'jp-LudwigNb-empty',
      'No runs yet. Start one in a notebook with ludwig_nb.train(config, data).'
    );
    const parts = [
      this._error,
      header,
      this._gpuMessage,
      this._cards,
      runsHeader,
      this._filters,
      this._noRuns,
      this._runs
    ];
    for (const child of parts) {
      this.node.appendChild(child);
    }
    this._runs.addEventListener('click', this._onClick);
    model.changed.connect((_, view) => this.render(view), this);
    this.render(model.view);
  }

  /** Copy a view state into the DOM. */
  render(view: ViewState): void {
    this._error.textContent = view.error;
    this._error.hidden = !view.error;
    this._gpuMessage.textContent = view.gpuMessage;
    this._gpuMessage.hidden = !view.gpuMessage;
    const cards = [...view.gpuCards, ...(view.hostCard ? [view.hostCard] : [])];
    const existing = new Map<string, HTMLElement>();
    for (const child of Array.from(this._cards.children) as HTMLElement[]) {
      existing.set(child.dataset.key ?? '', child);
    }
    this._cards.replaceChildren(
      ...cards.map(card => renderCard(card, existing.get(card.key) ?? el('section', '')))
    );
    this._noRuns.hidden = view.runGroups.length > 0;
    this._syncRuns(view.runGroups);
  }

  dispose(): void {
    this._runs.removeEventListener('click', this._onClick);
    super.dispose();
  }

  protected onAfterShow(_msg: Message): void {
    void this._model.poll?.refresh();
  }

  /** The run filter (live / this notebook / all) and the "hide finished" switch. */
  private _filterControls(): HTMLElement {
    const box = el('div', 'jp-LudwigNb-filters');
    const select = el('select', 'jp-LudwigNb-filter');
    for (const [value, label] of [
      ['server', "this server's runs"],
      ['live', 'live runs'],
      ['notebook', 'this notebook'],
      ['all', 'all runs']
    ]) {
      const option = el('option', '', label);
      option.value = value;
      select.appendChild(option);
    }
    select.value = this._model.runListOptions.filter;
    select.title = 'Which runs to list';
    select.addEventListener('change', () => {
      this._model.runListOptions = {
        ...this._model.runListOptions,
        filter: select.value as RunFilter
      };
    });
    const label = el('label', 'jp-LudwigNb-hideFinished');
    const check = el('input', 'jp-LudwigNb-hideFinished-input');
    check.type = 'checkbox';
    check.checked = this._model.runListOptions.hideFinished;
    check.addEventListener('change', () => {
      this._model.runListOptions = { ...this._model.runListOptions, hideFinished: check.checked };
    });
    label.append(check, document.createTextNode(' hide finished'));
    box.append(select, label);
    return box;
  }

  private _syncRuns(groups: RunGroup[]): void {
    // keyed by run id so that buttons keep their identity (and focus) across refreshes;
    // a heading (a button that folds the group) goes before each group's runs
    const existing = new Map<string, HTMLLIElement>();
    for (const child of Array.from(this._runs.children) as HTMLLIElement[]) {
      if (child.dataset.runId) {
        existing.set(child.dataset.runId, child);
      }
    }
    const ordered: HTMLLIElement[] = [];
    for (const group of groups) {
      ordered.push(groupHeading(group));
      if (group.collapsed) {
        continue;
      }
      for (const row of group.rows) {
        const item = existing.get(row.id) ?? this._newRunItem(row.id);
        updateRunItem(item, row);
        ordered.push(item);
      }
      if (group.hiddenText) {
        ordered.push(el('li', 'jp-LudwigNb-hiddenRuns', group.hiddenText));
      }
    }
    this._runs.replaceChildren(...ordered);
  }

  private _newRunItem(id: string): HTMLLIElement {
    const item = el('li', 'jp-LudwigNb-run');
    item.dataset.runId = id;
    for (const part of ['name', 'where', 'status']) {
      item.appendChild(el('div', `jp-LudwigNb-run-${part}`));
    }
    item.appendChild(bar(0, 'jp-LudwigNb-progress'));
    const parts = ['progressText', 'eta', 'deadline', 'earlyStop', 'best', 'alarms', 'throttle'];
    for (const part of [...parts, 'note']) {
      item.appendChild(el('div', `jp-LudwigNb-run-${part}`));
    }
    const buttons = el('div', 'jp-LudwigNb-run-actions');
    for (const action of ACTIONS) {
      const button = el(
        'button',
        `jp-Button jp-mod-styled jp-LudwigNb-${action}`,
        ACTION_LABELS[action]
      );
      button.dataset.action = action;
      button.type = 'button';
      buttons.appendChild(button);
    }
    item.appendChild(buttons);
    return item;
  }

  private _onClick = (event: MouseEvent): void => {
    const button = (event.target as HTMLElement).closest('button');
    const group = button?.dataset.group as RunGroupKey | undefined;
    if (group) {
      this._model.toggleGroup(group);
      return;
    }
    const item = button?.closest('li');
    const action = button?.dataset.action as ControlAction | undefined;
    const id = item?.dataset.runId;
    if (button && !button.disabled && action && id) {
      void this._model.control(id, action);
    }
  };

  private _model: SidebarModel;
  private _error: HTMLElement;
  private _gpuMessage: HTMLElement;
  private _cards: HTMLElement;
  private _runs: HTMLUListElement;
  private _filters: HTMLElement;
  private _noRuns: HTMLElement;
}

/** A group's heading: a button that folds or unfolds the group's runs. */
function groupHeading(group: RunGroup): HTMLLIElement {
  const item = el('li', 'jp-LudwigNb-group');
  item.dataset.group = group.key;
  const toggle = el(
    'button',
    'jp-LudwigNb-groupToggle',
    `${group.collapsed ? '▸' : '▾'} ${group.heading}`
  );
  toggle.type = 'button';
  toggle.dataset.group = group.key;
  toggle.setAttribute('aria-expanded', String(!group.collapsed));
  toggle.title = group.collapsed ? 'Show these runs' : 'Hide these runs';
  item.appendChild(toggle);
  return item;
}

function setText(item: HTMLElement, part: string, text: string): void {
  const node = item.querySelector(`.jp-LudwigNb-run-${part}`) as HTMLElement;
  node.textContent = text;
  node.hidden = !text;
}

function updateRunItem(item: HTMLLIElement, row: RunRow): void {
  item.className = `jp-LudwigNb-run jp-LudwigNb-level-${row.level} jp-LudwigNb-status-${row.status}`;
  item.dataset.status = row.status;
  setText(item, 'name', row.name);
  setText(item, 'where', row.where);
  (item.querySelector('.jp-LudwigNb-run-where') as HTMLElement).title = row.whereTitle;
  setText(item, 'status', row.status);
  setText(item, 'progressText', row.progressText);
  setText(item, 'eta', row.etaText);
  setText(item, 'deadline', row.deadlineText);
  setText(item, 'earlyStop', row.earlyStopText);
  setText(item, 'best', row.bestMetricText);
  setText(item, 'alarms', row.alarmText);
  setText(item, 'throttle', row.throttleText);
  setText(item, 'note', row.noteText);
  item
    .querySelector('.jp-LudwigNb-progress')
    ?.replaceWith(bar(row.progress, 'jp-LudwigNb-progress', row.likelyStop));
  (item.querySelector('.jp-LudwigNb-run-actions') as HTMLElement).hidden = !Object.values(
    row.actions
  ).some(Boolean);
  for (const action of ACTIONS) {
    const button = item.querySelector(`button[data-action="${action}"]`) as HTMLButtonElement;
    button.disabled = !row.actions[action];
    button.hidden =
      action === 'resume' ? row.status !== 'paused' : action === 'pause' && row.status === 'paused';
  }
}
