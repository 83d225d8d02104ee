// Files imported as text (`?raw`, Vite's raw import) by tests.
declare module '*.md?raw' {
  const text: string;
  export default text;
}
