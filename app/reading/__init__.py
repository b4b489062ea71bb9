"""Keep reading (issue #12): watched regions, the reading log's feed, text out and images in."""
