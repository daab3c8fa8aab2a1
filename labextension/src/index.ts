/**
 * ludwig-nb: a left-area JupyterLab panel with GPU cards and every kernel's training runs.
 */

import {
  ILabShell,
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { DocumentWidget } from '@jupyterlab/docregistry';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { LabIcon } from '@jupyterlab/ui-components';

import { Poll } from '@lumino/polling';

import { serverApi, snapshotApi } from './api';
import { SidebarModel } from './model';
import { NotebookLike, SnapshotRefresher } from './notebook_refresh';
import { PANEL_ID, SidebarPanel } from './panel';

const PLUGIN_ID = 'ludwig-nb:plugin';

const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="16"><g class="jp-icon3" fill="#616161">' +
  '<path d="M3 5h18v14H3zM5 7v10h14V7zm2 8h2v-5H7zm4 0h2V9h-2zm4 0h2v-3h-2z"/></g></svg>';

export const ludwigIcon = new LabIcon({ name: 'ludwig-nb:gpu', svgstr: ICON_SVG });

/** The models of the notebooks open in the main area (duck-typed: see notebook_refresh.ts). */
function openNotebooks(shell: ILabShell): NotebookLike[] {
  const found: NotebookLike[] = [];
  for (const widget of shell.widgets('main')) {
    if (!(widget instanceof DocumentWidget) || !widget.context.isReady) {
      continue;
    }
    const model = widget.context.model as Partial<NotebookLike>;
    if (model.cells && typeof model.cells.get === 'function') {
      found.push(model as NotebookLike);
    }
  }
  return found;
}

/** The path of the document in focus (null: none, or not a document). */
function currentPath(shell: ILabShell): string | null {
  const current = shell.currentWidget;
  return current instanceof DocumentWidget ? current.context.path : null;
}

/**
 * Reopened notebooks: a saved run snapshot whose run has gone on since the save is replaced
 * by the run's current one from its run directory (see notebook_refresh.ts).
 */
function startSnapshotRefresh(shell: ILabShell): Poll {
  const refresher = new SnapshotRefresher({ api: snapshotApi });
  const poll = new Poll({
    factory: () => refresher.refresh(openNotebooks(shell)),
    frequency: { interval: 2000, backoff: false },
    standby: 'when-hidden',
    name: 'ludwig-nb:snapshots'
  });
  shell.currentChanged.connect(() => void poll.refresh());
  return poll;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'GPU cards and the training runs of every kernel, with Stop / Pause / Resume.',
  autoStart: true,
  requires: [ILabShell],
  optional: [ISettingRegistry, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    shell: ILabShell,
    settingRegistry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null
  ) => {
    const model = new SidebarModel({ api: serverApi });
    const panel = new SidebarPanel(model);
    panel.title.icon = ludwigIcon;
    shell.add(panel, 'left', { rank: 900 });
    // the "this notebook" filter follows the document in focus
    const follow = () => {
      const path = currentPath(shell);
      if (path !== null && path.endsWith('.ipynb') && path !== model.runListOptions.notebook) {
        model.runListOptions = { ...model.runListOptions, notebook: path };
      }
    };
    shell.currentChanged.connect(follow);
    follow();
    restorer?.add(panel, PANEL_ID);
    startSnapshotRefresh(shell);

    let interval = 2000;
    const start = () => model.startPolling({ interval, isHidden: () => !panel.isVisible });
    start();

    if (settingRegistry) {
      settingRegistry
        .load(PLUGIN_ID)
        .then(settings => {
          const apply = () => {
            interval = Math.max(250, 1000 * (settings.get('refreshInterval').composite as number));
            model.viewOptions = {
              temperatureWarnMargin: settings.get('temperatureWarnMargin').composite as number
            };
            start();
          };
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason => console.warn('ludwig-nb: settings not loaded, using defaults', reason));
    }
  }
};

export default plugin;
