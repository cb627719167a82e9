"""What the offline gate could not judge: which policies read which resource types (`subjects`), what a remote
component's provider may register by its package schema (`schema`), and the components left unjudged (`unjudged`)."""
