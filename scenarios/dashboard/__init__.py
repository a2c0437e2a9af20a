"""`vcloud dashboard`: a live Mesa SolaraViz page of a scenario, or of a finished run directory (issue 17).

- `panels`: what each panel shows, as arrays and frames, read from the model's own tables (no Solara, no drawing);
- `figures`: the panels drawn as matplotlib Figures (no Solara), also usable in a notebook;
- `models`: the Mesa models the page drives (a scenario stepped in chunks, a run directory replayed);
- `controls`: the scenario's pydantic settings turned into SolaraViz controls;
- `app`: the Solara components and the page (imports the viz stack: imported only when a page is wanted);
- `serve`: starts `solara run` on localhost for the command line.
"""
