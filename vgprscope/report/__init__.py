"""Rows -> rich tables, markdown, CSV and JSON: several export formats from one result model."""
