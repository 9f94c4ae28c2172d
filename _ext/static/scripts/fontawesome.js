/* rbdlearn: this file replaces pydata-sphinx-theme's scripts/fontawesome.js (1.5 MB, 0.54 MB
   gzip-compressed, on every page), which turns each Font Awesome <i> icon into an inline SVG.
   The theme's stylesheet already draws the same icons from Font Awesome's web fonts
   (_static/vendor/fontawesome/webfonts/), so the page loses nothing without it; _config.yml
   lists _ext/static in html_static_path, whose files replace the theme's of the same path. */
