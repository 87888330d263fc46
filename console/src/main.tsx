import { render } from 'preact';
import { currentSession } from './api.js';
import { App } from './app.js';
import './styles.css';

// Asked before the first render (not from an effect after it): the sign-in form or the pages wait on this answer alone.
const session = currentSession();
session.catch(() => undefined);
render(<App session={session} />, document.getElementById('app')!);
