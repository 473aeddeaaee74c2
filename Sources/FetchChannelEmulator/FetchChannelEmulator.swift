// The reference backend (issue 4) is built on the HTTP server in HTTP/.
