/**
 * ludwig-nb: a left-area JupyterLab panel with GPU cards and every kernel's training runs.
 */

import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
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
function openNotebooks(app: JupyterFrontEnd): NotebookLike[] {
  const found: NotebookLike[] = [];
  for (const widget of app.shell.widgets('main')) {
    const context = (widget as { context?: { isReady?: boolean; model?: unknown } }).context;
    const model = context?.isReady
      ? (context.model as Partial<NotebookLike> | undefined)
      : undefined;
    if (model?.cells && typeof model.cells.get === 'function') {
      found.push(model as NotebookLike);
    }
  }
  return found;
}

/**
 * Reopened notebooks: a saved run snapshot whose run has gone on since the save is replaced
 * by the run's current one from its run directory (see notebook_refresh.ts).
 */
function startSnapshotRefresh(app: JupyterFrontEnd): Poll {
  const refresher = new SnapshotRefresher({ api: snapshotApi });
  const poll = new Poll({
    factory: () => refresher.refresh(openNotebooks(app)),
    frequency: { interval: 2000, backoff: false },
    standby: 'when-hidden',
    name: 'ludwig-nb:snapshots'
  });
  (
    app.shell as unknown as { currentChanged?: { connect: (f: () => void) => void } }
  ).currentChanged?.connect(() => void poll.refresh());
  return poll;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'GPU cards and the training runs of every kernel, with Stop / Pause / Resume.',
  autoStart: true,
  optional: [ISettingRegistry, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    settingRegistry: ISettingRegistry | null,
    restorer: ILayoutRestorer | null
  ) => {
    const model = new SidebarModel({ api: serverApi });
    const panel = new SidebarPanel(model);
    panel.title.icon = ludwigIcon;
    app.shell.add(panel, 'left', { rank: 900 });
    // the "this notebook" filter follows the document in focus
    const follow = () => {
      const current = app.shell.currentWidget as { context?: { path?: string } } | null;
      const path = current?.context?.path ?? null;
      if (path !== null && path.endsWith('.ipynb') && path !== model.runListOptions.notebook) {
        model.runListOptions = { ...model.runListOptions, notebook: path };
      }
    };
    const shell = app.shell as unknown as { currentChanged?: { connect: (f: () => void) => void } };
    shell.currentChanged?.connect(follow);
    follow();
    restorer?.add(panel, PANEL_ID);
    startSnapshotRefresh(app);

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
