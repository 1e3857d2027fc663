// The dashboard's entry: styles, then the app into #app; a shared dashboard (/share/<slug>) is
// its own small app, with no session.
import { render } from 'preact';
import { enterSharedDashboard } from './api.ts';
import { App } from './App.tsx';
import { matchPath } from './router.tsx';
import { SharedDashboard } from './share/SharedDashboard.tsx';
import './styles.css';

const shared = matchPath('/share/:slug', location.pathname);
const root = document.getElementById('app')!;
if (shared) {
  // Before the first render: every read of the page goes to the link's API from the start.
  enterSharedDashboard(shared.slug!);
  render(<SharedDashboard slug={shared.slug!} embed={new URLSearchParams(location.search).get('embed') === 'true'} />, root);
} else {
  render(<App />, root);
}
